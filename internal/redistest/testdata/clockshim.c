// clockshim: an LD_PRELOAD library that gives one process a clock of its
// own, so that tests can run a redis-server whose clock runs fast or jumps.
//
// Every clock the process reads is
//
//     seen = base + (real - base) * RATE + jump   (jump: wall clocks only)
//
// where base is the clock's value when the library loaded, RATE comes from
// REQLOCK_CLOCK_RATE (a decimal such as "4" or "0.5"; default 1) and jump
// is a signed 64-bit count of milliseconds, in native byte order, in the
// first 8 bytes of the file REQLOCK_CLOCK_FILE. The file is mapped, so a
// test moves the clock of a running server by rewriting those 8 bytes in
// place (never by truncating the file: a mapped page past the end of the
// file faults). The jump moves CLOCK_REALTIME* only, as a step of the
// system clock does; the monotonic clocks only ever run at RATE.
//
// Build: gcc -shared -fPIC -O2 -o clockshim.so clockshim.c
//
// It must work inside a process whose allocator itself reads the clock
// (jemalloc does), so it never allocates and never looks up the real
// functions with dlsym, which allocates and can re-enter the allocator: it
// asks the kernel directly with syscall(SYS_clock_gettime).

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define NSEC 1000000000LL
#define NCLOCKS 16

static int ready;
static double rate = 1;
static int64_t base[NCLOCKS];              // each clock's reading at load, in ns
static const volatile int64_t *jump_ms;    // the mapped jump, or NULL

static int64_t kernel_ns(clockid_t id, int *err) {
	struct timespec ts;
	*err = (int)syscall(SYS_clock_gettime, id, &ts);
	return (int64_t)ts.tv_sec * NSEC + ts.tv_nsec;
}

// parse_rate reads "4", "0.25" and the like without strtod, which may
// allocate; anything else leaves the rate at 1.
static double parse_rate(const char *s) {
	double v = 0, scale = 1;
	int digits = 0, frac = 0;
	for (; *s; s++) {
		if (*s == '.' && !frac) {
			frac = 1;
		} else if (*s >= '0' && *s <= '9') {
			v = v * 10 + (*s - '0');
			if (frac)
				scale *= 10;
			digits++;
		} else {
			return 1;
		}
	}
	return digits && v > 0 ? v / scale : 1;
}

// init runs as a constructor, and from the first clock read if that comes
// earlier (another library's constructor); both happen before the process
// has threads.
__attribute__((constructor)) static void init(void) {
	if (ready)
		return;
	const char *r = getenv("REQLOCK_CLOCK_RATE");
	if (r)
		rate = parse_rate(r);
	for (int id = 0; id < NCLOCKS; id++) {
		int err;
		base[id] = kernel_ns(id, &err);
	}
	const char *path = getenv("REQLOCK_CLOCK_FILE");
	if (path) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			void *p = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
			if (p != MAP_FAILED)
				jump_ms = p;
			close(fd);
		}
	}
	ready = 1;
}

static int is_wall(clockid_t id) {
	return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE;
}

static int is_scaled(clockid_t id) {
	return is_wall(id) || id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW ||
	       id == CLOCK_MONOTONIC_COARSE || id == CLOCK_BOOTTIME;
}

// seen_ns is clock id as this process sees it.
static int seen_ns(clockid_t id, int64_t *ns) {
	if (!ready)
		init();
	int err;
	int64_t real = kernel_ns(id, &err);
	if (err)
		return err;
	if (!is_scaled(id)) { // CPU-time clocks and the rest: as they are
		*ns = real;
		return 0;
	}
	int64_t t = base[id] + (int64_t)((double)(real - base[id]) * rate);
	if (is_wall(id) && jump_ms)
		t += __atomic_load_n(jump_ms, __ATOMIC_RELAXED) * 1000000LL;
	*ns = t;
	return 0;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
	int64_t ns;
	if ((unsigned)id >= NCLOCKS) // dynamic clocks (negative ids): untouched
		return (int)syscall(SYS_clock_gettime, id, ts);
	if (seen_ns(id, &ns))
		return -1; // errno is set by syscall
	ts->tv_sec = ns / NSEC;
	ts->tv_nsec = ns % NSEC;
	return 0;
}

int gettimeofday(struct timeval *tv, void *tz) {
	(void)tz; // obsolete; glibc ignores it too
	int64_t ns;
	if (seen_ns(CLOCK_REALTIME, &ns))
		return -1;
	tv->tv_sec = ns / NSEC; // glibc declares tv nonnull
	tv->tv_usec = ns % NSEC / 1000;
	return 0;
}

time_t time(time_t *out) {
	int64_t ns;
	if (seen_ns(CLOCK_REALTIME, &ns))
		return (time_t)-1;
	if (out)
		*out = ns / NSEC;
	return ns / NSEC;
}
