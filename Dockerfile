# syntax=docker/dockerfile:1
#
# researchbot's image: one static binary on an empty base.
#
#   DOCKER_BUILDKIT=1 docker build \
#     --build-arg VERSION="$(git describe --tags --always --dirty)" \
#     --build-arg COMMIT="$(git rev-parse HEAD)" -t researchbot .
#
# The build stage is pinned to a full Go version. The runtime image is
# scratch plus that stage's CA certificates (HTTPS to Slack, the LLM
# endpoint and web pages), an empty /tmp and an unprivileged user: no
# shell, no package manager, no curl, so every byte comes from a pinned tag
# (distroless images have no version tags, only digests). The health check
# runs the binary itself.

FROM golang:1.26.8-bookworm AS build
WORKDIR /src

# Modules, cached across builds. go.mod replaces three modules with
# directories of this repository, so those directories are needed too
# (internal/archtest checks that each is mounted here).
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=bind,source=go.mod,target=go.mod \
    --mount=type=bind,source=go.sum,target=go.sum \
    --mount=type=bind,source=internal/dateparserstub,target=internal/dateparserstub \
    --mount=type=bind,source=internal/domdistillerstub,target=internal/domdistillerstub \
    --mount=type=bind,source=internal/whatlanggostub,target=internal/whatlanggostub \
    go mod download

# The binary, with the module and build caches kept between builds. The
# version and commit are given as build arguments (.git is not in the
# build context); 'researchbot --version' prints them.
ARG VERSION=
ARG COMMIT=
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    --mount=type=bind,target=. \
    CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags="-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/researchbot ./cmd/researchbot

# What the runtime image needs besides the binary.
RUN mkdir -p /out/tmp && chmod 1777 /out/tmp \
 && echo 'nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin' > /out/passwd \
 && echo 'nonroot:x:65532:' > /out/group

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/passwd /etc/passwd
COPY --from=build /out/group /etc/group
COPY --from=build /out/tmp /tmp
COPY --from=build /out/researchbot /usr/local/bin/researchbot
USER 65532:65532
# /healthz, /readyz and /metrics (HTTP_ADDR, default :8080).
EXPOSE 8080
# GET /healthz on HTTP_ADDR; exit 0 or 1 with one line. 'serve' and 'worker'
# answer it; run other commands with --no-healthcheck (compose: healthcheck: disable).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["/usr/local/bin/researchbot", "healthcheck"]
# SIGTERM: stop taking work, give the step in flight up to 20 s, hand it
# back, exit. Give the container longer than that (compose: stop_grace_period).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/researchbot"]
CMD ["serve"]
