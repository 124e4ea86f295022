# Build: a static binary.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/researchbot ./cmd/researchbot

# Run: distroless, no shell, CA certificates included, as a non-root user.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/researchbot /usr/local/bin/researchbot
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/researchbot"]
CMD ["serve"]
