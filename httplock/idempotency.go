package httplock

import (
	"fmt"
	"net/http"
	"strings"
)

// IdempotencyKey uses the Idempotency-Key header, as the IETF draft defines
// it (one structured-field String, RFC 8941: quoted) or as most clients
// send it (plain, as Stripe's do): both of these are the key pay-1, the same
// lock and the same record.
//
//	Idempotency-Key: "pay-1"
//	Idempotency-Key: pay-1
//
// See ParseIdempotencyKeyLenient for the rules. No header means no key; an
// empty value (quoted or not), a quoted one that is not a structured-field
// string, or more than one header line is an error (400). To accept the
// draft's form only, use StrictIdempotencyKey.
func IdempotencyKey() KeyFunc { return idempotencyKey(ParseIdempotencyKeyLenient) }

// StrictIdempotencyKey uses the Idempotency-Key header as the IETF draft
// defines it, and only so: one structured-field String (RFC 8941), quoted:
//
//	Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"
//
// Parameters after the string are allowed and ignored, as RFC 8941 asks. No
// header means no key. An unquoted value, an empty string (quoted or not:
// an empty header too) or more than one header line is an error (400).
func StrictIdempotencyKey() KeyFunc { return idempotencyKey(ParseIdempotencyKey) }

func idempotencyKey(parse func(string) (string, error)) KeyFunc {
	return func(r *http.Request) (string, error) {
		vs := headerValues(r, HeaderIdempotencyKey)
		v, err := single(vs)
		if err != nil || len(vs) == 0 {
			return "", err
		}
		return parse(v) // an empty one is an error too
	}
}

// ParseIdempotencyKeyLenient returns the key in an Idempotency-Key field
// value sent quoted or plain, or an error wrapping ErrIdempotencyKeySyntax.
// A value that starts with a double quote (after spaces) is parsed as
// ParseIdempotencyKey does, parameters and all. Any other is the key as it
// is, spaces and tabs around it trimmed; it must not be empty, and must hold
// no double quote (a quoted string gone wrong) and no comma (two header
// lines a proxy joined into one: which is the key would be a guess).
func ParseIdempotencyKeyLenient(v string) (string, error) {
	t := strings.Trim(v, " \t")
	switch {
	case strings.HasPrefix(t, `"`):
		return ParseIdempotencyKey(v)
	case t == "":
		return "", fmt.Errorf("%w: empty", ErrIdempotencyKeySyntax)
	}
	if i := strings.IndexAny(t, `",`); i >= 0 {
		return "", fmt.Errorf("%w: %q in an unquoted key", ErrIdempotencyKeySyntax, t[i])
	}
	return t, nil
}

// ParseIdempotencyKey returns the key in an Idempotency-Key field value, or
// an error wrapping ErrIdempotencyKeySyntax.
func ParseIdempotencyKey(v string) (string, error) {
	p := sfParser{s: v}
	p.skipSP()
	key, ok := p.str()
	if !ok || !p.params() {
		return "", fmt.Errorf("%w at byte %d", ErrIdempotencyKeySyntax, p.i)
	}
	p.skipSP()
	if p.i != len(p.s) {
		return "", fmt.Errorf("%w: trailing characters at byte %d", ErrIdempotencyKeySyntax, p.i)
	}
	if key == "" {
		return "", fmt.Errorf("%w: empty", ErrIdempotencyKeySyntax)
	}
	return key, nil
}

// sfParser reads the parts of RFC 8941 (with RFC 9651's additions) that an
// Item needs: a bare item and its parameters.
type sfParser struct {
	s string
	i int
}

func (p *sfParser) skipSP() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *sfParser) next(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str parses an sf-string: printable ASCII in quotes, with \" and \\ as the
// only escapes.
func (p *sfParser) str() (string, bool) {
	if !p.next('"') {
		return "", false
	}
	start := p.i
	var b *strings.Builder // only for strings with escapes
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			if b == nil {
				return p.s[start : p.i-1], true
			}
			return b.String(), true
		case c == '\\':
			if p.i+1 >= len(p.s) || (p.s[p.i+1] != '"' && p.s[p.i+1] != '\\') {
				return "", false
			}
			if b == nil {
				b = new(strings.Builder)
				b.WriteString(p.s[start:p.i])
			}
			b.WriteByte(p.s[p.i+1])
			p.i += 2
			continue
		case c < 0x20 || c > 0x7e:
			return "", false
		}
		if b != nil {
			b.WriteByte(c)
		}
		p.i++
	}
	return "", false
}

// params skips ";key[=bare-item]" parameters, checking their syntax.
func (p *sfParser) params() bool {
	for p.next(';') {
		p.skipSP()
		if !p.key() {
			return false
		}
		if p.next('=') && !p.bareItem() {
			return false
		}
	}
	return true
}

func (p *sfParser) key() bool {
	if p.i >= len(p.s) || !(isLower(p.s[p.i]) || p.s[p.i] == '*') {
		return false
	}
	p.i++
	for p.i < len(p.s) && (isLower(p.s[p.i]) || isDigit(p.s[p.i]) || strings.IndexByte("_-.*", p.s[p.i]) >= 0) {
		p.i++
	}
	return true
}

func (p *sfParser) bareItem() bool {
	if p.i >= len(p.s) {
		return false
	}
	switch c := p.s[p.i]; {
	case c == '-' || isDigit(c):
		return p.number()
	case c == '"':
		_, ok := p.str()
		return ok
	case c == '*' || isAlpha(c):
		p.i++
		for p.i < len(p.s) && (isTchar(p.s[p.i]) || p.s[p.i] == ':' || p.s[p.i] == '/') {
			p.i++
		}
		return true
	case c == ':': // byte sequence
		p.i++
		for p.i < len(p.s) && (isAlpha(p.s[p.i]) || isDigit(p.s[p.i]) || strings.IndexByte("+/=", p.s[p.i]) >= 0) {
			p.i++
		}
		return p.next(':')
	case c == '?': // boolean
		p.i++
		return p.next('0') || p.next('1')
	case c == '@': // date (RFC 9651)
		p.i++
		return p.number()
	case c == '%': // display string (RFC 9651)
		p.i++
		return p.displayString()
	}
	return false
}

// number parses an sf-integer (up to 15 digits) or sf-decimal (up to 12
// digits, a dot, 1 to 3 digits).
func (p *sfParser) number() bool {
	p.next('-')
	start := p.i
	for p.i < len(p.s) && isDigit(p.s[p.i]) {
		p.i++
	}
	whole := p.i - start
	if whole == 0 {
		return false
	}
	if !p.next('.') {
		return whole <= 15
	}
	fstart := p.i
	for p.i < len(p.s) && isDigit(p.s[p.i]) {
		p.i++
	}
	frac := p.i - fstart
	return whole <= 12 && frac >= 1 && frac <= 3
}

func (p *sfParser) displayString() bool {
	if !p.next('"') {
		return false
	}
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return true
		case c == '%':
			if p.i+2 >= len(p.s) || !isLowerHex(p.s[p.i+1]) || !isLowerHex(p.s[p.i+2]) {
				return false
			}
			p.i += 3
			continue
		case c < 0x20 || c > 0x7e:
			return false
		}
		p.i++
	}
	return false
}

func isLower(c byte) bool    { return 'a' <= c && c <= 'z' }
func isAlpha(c byte) bool    { return isLower(c) || ('A' <= c && c <= 'Z') }
func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isLowerHex(c byte) bool { return isDigit(c) || ('a' <= c && c <= 'f') }

// isTchar reports an RFC 9110 token character.
func isTchar(c byte) bool {
	return isAlpha(c) || isDigit(c) || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
