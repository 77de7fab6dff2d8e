package core

import (
	"math"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
)

// The names of reqlock's telemetry: a contract, listed in the doc of
// WithTelemetry. Keys, tokens and fences never become metric attributes, so
// that the number of metric streams stays bounded whatever the traffic.
const (
	tracerName = "github.com/reqlock/reqlock/core"

	metricAcquisitions  = "reqlock.lock.acquisitions"
	metricWaitDuration  = "reqlock.lock.wait.duration"
	metricHoldDuration  = "reqlock.lock.hold.duration"
	metricRenewals      = "reqlock.lock.renewals"
	metricLost          = "reqlock.lock.lost"
	metricHeld          = "reqlock.lock.held"
	metricWatchdogLag   = "reqlock.watchdog.lag"
	metricBatchDuration = "reqlock.watchdog.batch.duration"

	spanAcquire = "reqlock.acquire"
	spanRelease = "reqlock.release"

	eventRenewalFailed = "reqlock.renewal_failed"
	eventLockLost      = "reqlock.lock_lost"

	attrStore       = "reqlock.store"
	attrMode        = "reqlock.mode"
	attrOutcome     = "reqlock.outcome"
	attrReason      = "reqlock.reason"
	attrFence       = "reqlock.fence"
	attrHolderTTLMS = "reqlock.holder_ttl_ms"
	attrError       = "error"

	// logStoreKey names the hashed store key in log lines; the raw key is
	// never logged.
	logStoreKey  = "reqlock.store_key"
	logLeaseLeft = "reqlock.lease_left"
)

// acquireMode is how an acquire call gets the lock.
type acquireMode uint8

const (
	modeTry  acquireMode = iota // TryObtain, TryObtainOrRecord: one attempt
	modeWait                    // Obtain and the calls that wait like it
	numModes
)

var modeNames = [numModes]string{"try", "wait"}

// acquireOutcome is how an acquire call ended.
type acquireOutcome uint8

const (
	acquireObtained    acquireOutcome = iota
	acquireTaken                      // someone else holds the key
	acquireUnavailable                // the store failed, or did not answer in time
	acquireCancelled                  // the caller's context was cancelled
	acquireRecorded                   // the key's record came back instead of the lock
	numAcquireOutcomes
	acquireRefused // the call's arguments were refused: nothing to count
)

var acquireOutcomeNames = [numAcquireOutcomes]string{"obtained", "taken", "unavailable", "cancelled", "recorded"}

// holdOutcome is how a held lock stopped being held.
type holdOutcome uint8

const (
	holdReleased holdOutcome = iota
	holdLost
	numHoldOutcomes
)

var holdOutcomeNames = [numHoldOutcomes]string{"released", "lost"}

// renewalOutcome is how one extend of one lock ended.
type renewalOutcome uint8

const (
	renewalRenewed renewalOutcome = iota
	renewalFailed                 // the store did not answer; it is tried again
	renewalNotHeld                // the lock was gone from the store
	numRenewalOutcomes
)

var renewalOutcomeNames = [numRenewalOutcomes]string{"renewed", "failed", "not_held"}

// lossReason is why a lock was lost: a reqlock.reason in metrics, span
// events and log lines.
type lossReason uint8

const (
	// lostExpired: the lease ran out by our clock before a renewal got
	// through (the store was down or slow, or the process stalled).
	lostExpired lossReason = iota
	// lostRenewalNotHeld: a watchdog renewal found the lock gone from the
	// store: expired there, deleted, or taken by someone else.
	lostRenewalNotHeld
	// lostRefreshNotHeld: Refresh found the lock gone from the store.
	lostRefreshNotHeld
	numLossReasons
)

var lossReasonNames = [numLossReasons]string{"lease_expired", "renewal_not_held", "refresh_not_held"}

func (r lossReason) String() string { return lossReasonNames[r] }

// batchOutcome is how one batched Extend round trip of the watchdog ended.
type batchOutcome uint8

const (
	batchOK     batchOutcome = iota // the store answered for every lock
	batchFailed                     // at least one lock's renewal failed and is retried
	numBatchOutcomes
)

var batchOutcomeNames = [numBatchOutcomes]string{"ok", "failed"}

// releaseOutcome is what a release span ended with.
var (
	releaseReleased    = attribute.String(attrOutcome, "released")
	releaseNotHeld     = attribute.String(attrOutcome, "not_held")
	releaseUnavailable = attribute.String(attrOutcome, "unavailable")
)

// fenceAttr is the fence as a span attribute: an Int64 when it fits, which
// is every fence below 2^63; a decimal string above that.
func fenceAttr(fence uint64) attribute.KeyValue {
	if fence <= math.MaxInt64 {
		return attribute.Int64(attrFence, int64(fence))
	}
	return attribute.String(attrFence, strconv.FormatUint(fence, 10))
}
