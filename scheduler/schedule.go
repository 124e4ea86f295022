package scheduler

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
)

// Frequency is how often a stream's digest is posted.
type Frequency string

// The supported frequencies. Biweekly means every other week (every 14 days), not
// twice a month.
const (
	Daily    Frequency = "daily"
	Weekly   Frequency = "weekly"
	Biweekly Frequency = "biweekly"
	Monthly  Frequency = "monthly"
)

// frequencyRule is everything that depends on a frequency; the table of
// them (frequencyRules) is the one place a frequency is described.
type frequencyRule struct {
	frequency Frequency
	// describe says when it fires, e.g. "every other Monday".
	describe func(s ScheduleSpec) string
	// onWeekday and onMonthDay say which field picks the day (the cron
	// fields, and the fields the creation conversation asks for).
	onWeekday, onMonthDay bool
	// back returns t one period earlier.
	back func(t time.Time) time.Time
	// longestGap is the longest time between two consecutive fires.
	longestGap time.Duration
}

// frequencyRules is the frequencies in display order, with their rules.
func frequencyRules() []frequencyRule {
	day := 24 * time.Hour
	return []frequencyRule{
		{frequency: Daily, describe: func(ScheduleSpec) string { return "every day" },
			back: func(t time.Time) time.Time { return t.AddDate(0, 0, -1) }, longestGap: day + time.Hour},
		{frequency: Weekly, describe: func(s ScheduleSpec) string { return "every " + s.Weekday.String() }, onWeekday: true,
			back: func(t time.Time) time.Time { return t.AddDate(0, 0, -7) }, longestGap: 7*day + time.Hour},
		{frequency: Biweekly, describe: func(s ScheduleSpec) string { return "every other " + s.Weekday.String() }, onWeekday: true,
			back: func(t time.Time) time.Time { return t.AddDate(0, 0, -14) }, longestGap: 14*day + time.Hour},
		{frequency: Monthly, describe: func(s ScheduleSpec) string {
			what := fmt.Sprintf("monthly on day %d", s.MonthDay)
			if s.MonthDay > 28 {
				what += " (the last day in shorter months)"
			}
			return what
		}, onMonthDay: true, back: func(t time.Time) time.Time { return t.AddDate(0, -1, 0) }, longestGap: 31*day + time.Hour},
	}
}

// rule returns f's rule; ok is false for an unsupported frequency.
func (f Frequency) rule() (r frequencyRule, ok bool) {
	for _, r := range frequencyRules() {
		if r.frequency == f {
			return r, true
		}
	}
	return frequencyRule{}, false
}

// Frequencies lists every supported frequency in display order.
func Frequencies() []Frequency {
	var out []Frequency
	for _, r := range frequencyRules() {
		out = append(out, r.frequency)
	}
	return out
}

// frequencyChoices is Frequencies as strings.
func frequencyChoices() []string {
	var out []string
	for _, f := range Frequencies() {
		out = append(out, string(f))
	}
	return out
}

// Valid reports whether f is one of the supported frequencies.
func (f Frequency) Valid() bool {
	_, ok := f.rule()
	return ok
}

// Errors returned for an invalid schedule; test with errors.Is.
var (
	ErrBadFrequency = errors.New("scheduler: invalid frequency")
	ErrBadTimeOfDay = errors.New("scheduler: invalid time of day")
	ErrBadTimeZone  = errors.New("scheduler: invalid time zone")
	ErrBadWeekday   = errors.New("scheduler: invalid weekday")
	ErrBadMonthDay  = errors.New("scheduler: invalid day of month")
	ErrNoAnchor     = errors.New("scheduler: biweekly schedule needs an anchor time")
	ErrNoFireTime   = errors.New("scheduler: schedule produced no fire time")
)

// ScheduleSpec is everything needed to compute when a stream's digest fires.
//
// Semantics, all in the local time of TimeZone:
//   - Daily: every day at TimeOfDay.
//   - Weekly: every Weekday at TimeOfDay.
//   - Biweekly: every other Weekday at TimeOfDay. The parity is anchored to the week
//     (Monday to Sunday) of the first Weekday at TimeOfDay strictly after Anchor, so a
//     stream created on a Wednesday with Weekday Monday first fires the following Monday
//     and then every 14 days.
//   - Monthly: on MonthDay at TimeOfDay. A MonthDay that a month does not have (29, 30
//     or 31) fires on that month's last day instead: "monthly on the 31st" fires on
//     30 April, 28 February (29 in leap years), 31 May, and so on. It never skips a month.
//
// Daylight saving never skips nor doubles a digest: each scheduled local date fires
// exactly once. A TimeOfDay that does not exist on that date (inside a spring-forward
// gap) fires at the same wall clock shifted forward by the gap (02:30 becomes 03:30);
// a TimeOfDay that occurs twice (fall back) fires at its first occurrence.
type ScheduleSpec struct {
	Frequency Frequency    `json:"frequency"`
	TimeOfDay string       `json:"time_of_day"` // "HH:MM", 24-hour clock
	TimeZone  string       `json:"time_zone"`   // IANA name, e.g. "America/New_York"
	Weekday   time.Weekday `json:"weekday"`     // weekly and biweekly
	MonthDay  int          `json:"month_day"`   // monthly, 1..31
	Anchor    time.Time    `json:"anchor"`      // biweekly parity; the stream's creation time
}

// Validate reports the first problem with s, wrapping one of the ErrBad… errors.
func (s ScheduleSpec) Validate() error {
	_, err := s.compile()
	return err
}

// Describe returns a short English description such as
// "every other Monday at 09:00 (Europe/London)". It describes invalid specs as best it can.
func (s ScheduleSpec) Describe() string {
	what := string(s.Frequency)
	if r, ok := s.Frequency.rule(); ok {
		what = r.describe(s)
	}
	return fmt.Sprintf("%s at %s (%s)", what, s.TimeOfDay, s.TimeZone)
}

// NextFire returns the first digest time strictly after after, in the stream's time zone.
func NextFire(spec ScheduleSpec, after time.Time) (time.Time, error) {
	c, err := spec.compile()
	if err != nil {
		return time.Time{}, err
	}
	return c.next(after)
}

// catchUpWindow bounds the search for the latest missed fire: longer than
// the longest gap between consecutive fires of any frequency, so the
// window always holds one.
func catchUpWindow() time.Duration {
	var longest time.Duration
	for _, r := range frequencyRules() {
		longest = max(longest, r.longestGap)
	}
	return longest + 24*time.Hour
}

// DueFires reports whether a digest is due at now, given the scheduled time of the last
// digest that was handled (zero if the stream never fired; then the spec's Anchor, the
// stream's creation time, is used).
//
// When due, fire is the latest scheduled time at or before now: after downtime that
// missed several fires, there is ONE catch-up digest, not a burst. The caller records
// fire as the new lastFire. When not due, fire is the next scheduled time (useful for
// sleeping until then). An invalid spec is never due; check it with
// [ScheduleSpec.Validate] when the stream is saved.
func DueFires(spec ScheduleSpec, lastFire, now time.Time) (fire time.Time, due bool) {
	c, err := spec.compile()
	if err != nil {
		return time.Time{}, false
	}
	base := lastFire
	if base.IsZero() {
		base = spec.Anchor
	}
	if base.IsZero() {
		base = now
	}
	next, err := c.next(base)
	if err != nil {
		return time.Time{}, false
	}
	if next.After(now) {
		return next, false
	}
	fire = next
	if start := now.Add(-catchUpWindow()); start.After(fire) {
		if f, err := c.next(start); err == nil && !f.After(now) {
			fire = f
		}
	}
	for range 64 {
		n, err := c.next(fire)
		if err != nil || n.After(now) {
			break
		}
		fire = n
	}
	return fire, true
}

// LoadZone loads an IANA time zone by name. It refuses the empty name and "Local",
// whose meaning would depend on the server; errors wrap ErrBadTimeZone.
func LoadZone(name string) (*time.Location, error) {
	if name == "" {
		return nil, fmt.Errorf("%w: empty (use an IANA name such as Europe/London)", ErrBadTimeZone)
	}
	if name == "Local" || len(name) > 64 || strings.ContainsAny(name, " \t\r\n") {
		return nil, fmt.Errorf("%w: %q (use an IANA name such as Europe/London)", ErrBadTimeZone, name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a known IANA time zone", ErrBadTimeZone, name)
	}
	return loc, nil
}

var clockRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([01]?[0-9]|2[0-3]):([0-5][0-9])$`) })

// ParseTimeOfDay parses a 24-hour "HH:MM" (or "H:MM") clock time. Errors wrap ErrBadTimeOfDay.
func ParseTimeOfDay(s string) (hour, minute int, err error) {
	m := clockRE().FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, 0, fmt.Errorf("%w: %q (want HH:MM on a 24-hour clock, e.g. 09:00)", ErrBadTimeOfDay, s)
	}
	hour, _ = strconv.Atoi(m[1])
	minute, _ = strconv.Atoi(m[2])
	return hour, minute, nil
}

// compiled is a validated ScheduleSpec ready to compute fire times.
type compiled struct {
	loc          *time.Location
	hour, minute int
	monthDay     int
	// dates matches every local date (as a UTC midnight) that may carry a fire;
	// keep narrows it further (monthly last-day rule, biweekly parity).
	dates    cron.Schedule
	biweekly bool
	parity   int64 // day number of the Monday of the biweekly anchor week
}

// compile validates s and builds its cron schedule.
//
// The schedule is computed in two stages. robfig/cron evaluates the date pattern (day
// of month, weekday) on the stream's local calendar, which is represented as UTC
// midnights so that cron's clock never crosses a daylight-saving change; each matching
// local date is then turned into an instant in the stream's zone by wallClock. Letting
// cron v3 step through the zone's own clock (CRON_TZ=<zone> "MM HH * * *") skips a time
// that falls in a spring-forward gap, fires twice in a repeated fall-back hour, and
// skips whole days in zones with half-hour shifts (Australia/Lord_Howe); the tests pin
// the behaviour this avoids.
func (s ScheduleSpec) compile() (compiled, error) {
	var c compiled
	rule, ok := s.Frequency.rule()
	if !ok {
		return c, fmt.Errorf("%w: %q (want %s)", ErrBadFrequency, s.Frequency, strings.Join(frequencyChoices(), ", "))
	}
	loc, err := LoadZone(s.TimeZone)
	if err != nil {
		return c, err
	}
	c.loc = loc
	if c.hour, c.minute, err = ParseTimeOfDay(s.TimeOfDay); err != nil {
		return c, err
	}
	dom, dow := "*", "*"
	switch {
	case rule.onWeekday:
		if s.Weekday < time.Sunday || s.Weekday > time.Saturday {
			return c, fmt.Errorf("%w: %d (want 0=Sunday … 6=Saturday)", ErrBadWeekday, s.Weekday)
		}
		dow = strconv.Itoa(int(s.Weekday))
	case rule.onMonthDay:
		if s.MonthDay < 1 || s.MonthDay > 31 {
			return c, fmt.Errorf("%w: %d (want 1 … 31)", ErrBadMonthDay, s.MonthDay)
		}
		c.monthDay = s.MonthDay
		dom = strconv.Itoa(s.MonthDay)
		if s.MonthDay > 28 {
			dom = "28-31" // keep picks the month's MonthDay or its last day
		}
	}
	expr := fmt.Sprintf("CRON_TZ=UTC 0 0 %s * %s", dom, dow)
	if c.dates, err = cron.ParseStandard(expr); err != nil {
		return c, fmt.Errorf("scheduler: cron expression %q: %w", expr, err)
	}
	if s.Frequency == Biweekly {
		if s.Anchor.IsZero() {
			return c, ErrNoAnchor
		}
		_, first, err := c.nextDate(s.Anchor)
		if err != nil {
			return c, err
		}
		c.biweekly = true
		c.parity = mondayOf(first)
	}
	return c, nil
}

// next returns the first fire strictly after after.
func (c compiled) next(after time.Time) (time.Time, error) {
	fire, _, err := c.nextDate(after)
	return fire, err
}

// nextDate returns the first fire strictly after after, and the local date it belongs
// to (as a UTC midnight).
func (c compiled) nextDate(after time.Time) (fire, date time.Time, err error) {
	la := after.In(c.loc)
	// Start two days early: a fire belongs to its local date, and a gap can push a
	// late-evening fire past midnight.
	t := time.Date(la.Year(), la.Month(), la.Day()-2, 0, 0, 0, 0, time.UTC)
	for range 64 {
		d := c.dates.Next(t)
		if d.IsZero() {
			break
		}
		t = d
		if !c.keep(d) {
			continue
		}
		fire := wallClock(d.Year(), d.Month(), d.Day(), c.hour, c.minute, c.loc)
		if fire.After(after) {
			return fire, d, nil
		}
	}
	return time.Time{}, time.Time{}, fmt.Errorf("%w after %s", ErrNoFireTime, after.Format(time.RFC3339))
}

// keep applies the rules cron cannot express.
func (c compiled) keep(d time.Time) bool {
	if c.monthDay > 28 {
		want := min(c.monthDay, daysIn(d.Year(), d.Month()))
		if d.Day() != want {
			return false
		}
	}
	if c.biweekly {
		weeks := (mondayOf(d) - c.parity) / 7
		if weeks%2 != 0 {
			return false
		}
	}
	return true
}

// wallClock returns the instant at which the local clock of loc shows y-mo-d h:mi.
// If that happens twice (fall back) it returns the first; if never (spring-forward gap)
// it returns the wall clock shifted forward by the gap.
func wallClock(y int, mo time.Month, d, h, mi int, loc *time.Location) time.Time {
	naive := time.Date(y, mo, d, h, mi, 0, 0, time.UTC)
	var best, latest time.Time
	seen := map[int]bool{}
	for _, probe := range []time.Duration{-36 * time.Hour, 0, 36 * time.Hour} {
		_, off := naive.Add(probe).In(loc).Zone()
		if seen[off] {
			continue
		}
		seen[off] = true
		inst := naive.Add(-time.Duration(off) * time.Second)
		l := inst.In(loc)
		if l.Year() == y && l.Month() == mo && l.Day() == d && l.Hour() == h && l.Minute() == mi {
			if best.IsZero() || inst.Before(best) {
				best = inst
			}
		}
		if latest.IsZero() || inst.After(latest) {
			latest = inst
		}
	}
	if !best.IsZero() {
		return best.In(loc)
	}
	return latest.In(loc)
}

// daysIn returns the number of days in month m of year y.
func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// mondayOf returns the day number (days since 1970-01-01) of the Monday starting the
// week of t's calendar date.
func mondayOf(t time.Time) int64 {
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC).Unix() / 86400
	return day - int64((int(t.Weekday())+6)%7)
}
