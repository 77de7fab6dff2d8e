package httplock

import "fmt"

// ConfigError names the Config field NewEngine cannot work with, and what is
// wrong with it; New and the adapters' constructors panic with it (wrapped).
// errors.Is(err, ErrInvalidConfig) holds for it, and errors.As finds it:
//
//	httplock: Config.MaxWait is negative (-1s)
type ConfigError struct {
	// Field is the field's name in the Config, with the sub-config's field
	// after a dot: "MaxWait", "Replay.Retention".
	Field string
	// Problem says what is wrong, as the message reads after the field:
	// "is negative (-1s)".
	Problem string
	// Err is the error behind the problem, if any: core.ErrNoRecords for
	// Replay on a store that keeps no records, core.ErrSemaphoreUnsupported
	// for Limit on one that keeps no permits, a meter's error for
	// Telemetry.
	Err error
}

// Error reads "httplock: Config.<Field> <Problem>", then Err if any.
func (e *ConfigError) Error() string {
	s := "httplock: Config." + e.Field + " " + e.Problem
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrInvalidConfig and Err, for errors.Is.
func (e *ConfigError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalidConfig}
	}
	return []error{ErrInvalidConfig, e.Err}
}

// badField is the ConfigError for field.
func badField(field, problem string, err error) *ConfigError {
	return &ConfigError{Field: field, Problem: problem, Err: err}
}

// negative is the ConfigError for a field that must not be negative.
func negative[T ~int64 | ~int](field string, v T) *ConfigError {
	return badField(field, fmt.Sprintf("is negative (%v)", v), nil)
}
