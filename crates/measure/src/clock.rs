//! Clocks: a monotonic clock in whole nanoseconds for everything outside timed loops, and the
//! [`Clock`] that timed loops read once per operation — the CPU's time-stamp counter when it is
//! invariant and the kernel trusts it (as fio's `clocksource=cpu`), CLOCK_MONOTONIC otherwise.
//!
//! Why a TSC: a vDSO `clock_gettime` costs about 22 ns here and `rdtsc` about 10 ns; at one
//! read per 4 KiB cached operation (0.6-0.9 µs) that is 1-2 % of every figure (bench/README.md).
//! The TSC is used only when the CPU says it is invariant (constant rate, runs in every
//! C-state: CPUID 0x80000007 EDX bit 8) and the kernel's own clocksource is `tsc` (the kernel
//! checked it is synchronised across CPUs and would have switched away had it found it
//! unstable). Its rate is calibrated against CLOCK_MONOTONIC once per process. Set
//! `FSBENCH_CLOCK=monotonic` to force the fallback, or `tsc` to make an unusable TSC an error.
//! Results record which clock timed them.

use std::sync::OnceLock;

/// Nanoseconds since an arbitrary fixed point (CLOCK_MONOTONIC).
///
/// `std::time::Instant` reads the same clock; this returns a plain `u64` so the hot loop does no
/// `Duration` arithmetic.
#[inline(always)]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Wall-clock time as seconds since the Unix epoch (for provenance, never for timing).
pub fn unix_time_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Formats seconds since the Unix epoch as an RFC 3339 UTC timestamp (`2026-11-22T00:06:55Z`).
pub fn rfc3339_utc(unix_s: f64) -> String {
    let secs = unix_s.max(0.0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil-from-days (Howard Hinnant's algorithm), valid for the proleptic Gregorian calendar.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

pub use fsbench_model::records::ClockSource;

/// The clock of timed loops: read [`Clock::ticks`] once per operation, turn differences into
/// nanoseconds with [`Clock::ns`]. Copy it into a local before a loop; it never allocates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    source: ClockSource,
    /// Nanoseconds per tick, as a 32.32 fixed-point number (1 << 32 for the monotonic clock).
    ns_per_tick_q32: u64,
}

pub use fsbench_model::records::ClockInfo;

static CLOCK: OnceLock<(Clock, Option<&'static str>)> = OnceLock::new();

impl Clock {
    /// The process's clock: chosen and calibrated on first use (about 10 ms), then shared.
    #[inline]
    pub fn get() -> Clock {
        CLOCK.get_or_init(Clock::choose).0
    }

    /// The process's clock and why it is not the TSC (when it is not), for provenance.
    pub fn info() -> ClockInfo {
        let (clock, reason) = *CLOCK.get_or_init(Clock::choose);
        ClockInfo {
            source: clock.source,
            ticks_per_s: 1e9 * (1u64 << 32) as f64 / clock.ns_per_tick_q32 as f64,
            fallback_reason: reason.map(std::borrow::Cow::Borrowed),
        }
    }

    /// CLOCK_MONOTONIC: ticks are nanoseconds.
    pub fn monotonic() -> Clock {
        Clock {
            source: ClockSource::Monotonic,
            ns_per_tick_q32: 1 << 32,
        }
    }

    /// The TSC calibrated now, or why it cannot be used on this host.
    pub fn tsc() -> Result<Clock, &'static str> {
        tsc::usable()?;
        let ns_per_tick_q32 = tsc::calibrate_q32()?;
        Ok(Clock {
            source: ClockSource::Tsc,
            ns_per_tick_q32,
        })
    }

    /// Chooses the process's clock now, honouring `FSBENCH_CLOCK` (`auto`, `tsc`, `monotonic`);
    /// an unknown value, or `tsc` where the TSC cannot be used, is an error saying what to set.
    /// Programs call it once at start; [`Clock::get`] alone never fails (it falls back).
    pub fn configure() -> Result<ClockInfo, String> {
        let wanted = std::env::var("FSBENCH_CLOCK").unwrap_or_default();
        match wanted.as_str() {
            "" | "auto" | "monotonic" => {}
            "tsc" => {
                let chosen = Clock::info();
                if chosen.source != ClockSource::Tsc {
                    return Err(format!(
                        "FSBENCH_CLOCK=tsc: the TSC cannot be used here ({}); unset it or set FSBENCH_CLOCK=monotonic",
                        chosen.fallback_reason.as_deref().unwrap_or("unknown reason")
                    ));
                }
            }
            other => {
                return Err(format!(
                    "FSBENCH_CLOCK={other}: unknown clock; use auto (the default), tsc or monotonic"
                ))
            }
        }
        Ok(Clock::info())
    }

    fn choose() -> (Clock, Option<&'static str>) {
        if std::env::var("FSBENCH_CLOCK").as_deref() == Ok("monotonic") {
            return (Clock::monotonic(), Some("FSBENCH_CLOCK=monotonic"));
        }
        match Clock::tsc() {
            Ok(clock) => (clock, None),
            Err(why) => (Clock::monotonic(), Some(why)),
        }
    }

    pub fn source(self) -> ClockSource {
        self.source
    }

    /// The current reading, in ticks of this clock.
    #[inline(always)]
    pub fn ticks(self) -> u64 {
        match self.source {
            ClockSource::Tsc => tsc::read(),
            ClockSource::Monotonic => now_ns(),
        }
    }

    /// A number of ticks of this clock (a difference of two readings), in nanoseconds.
    #[inline(always)]
    pub fn ns(self, ticks: u64) -> u64 {
        ((ticks as u128 * self.ns_per_tick_q32 as u128) >> 32) as u64
    }

    /// Ticks of this clock per nanosecond: the inverse of [`Clock::ns`], to turn a duration or
    /// a deadline in nanoseconds into ticks.
    pub fn ticks_per_ns(self) -> f64 {
        1e9 / self.ns(1_000_000_000) as f64
    }

    /// The smallest step of this clock in nanoseconds, as a time difference is rounded to it
    /// (never below 1 ns, the unit every figure is stored in): a TSC tick, or what
    /// clock_getres(2) says of CLOCK_MONOTONIC. A time of T ns measured by it is off by up to
    /// this much, which is what one short timed pass is quantised to.
    pub fn resolution_ns(self) -> f64 {
        let tick = match self.source {
            ClockSource::Tsc => self.ns_per_tick_q32 as f64 / (1u64 << 32) as f64,
            ClockSource::Monotonic => {
                let mut ts = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists.
                unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
                ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
            }
        };
        tick.max(1.0)
    }
}

#[cfg(target_arch = "x86_64")]
mod tsc {
    use super::now_ns;
    use std::arch::x86_64::{__cpuid, _rdtsc};

    #[inline(always)]
    pub fn read() -> u64 {
        // SAFETY: rdtsc exists on every x86_64 CPU; `usable` checked it is invariant before any
        // Clock with the Tsc source exists.
        unsafe { _rdtsc() }
    }

    /// Invariant TSC (CPUID) and the kernel's clocksource is `tsc`.
    // `__cpuid` became safe in Rust 1.87; the workspace builds from 1.85.
    #[allow(unused_unsafe)]
    pub fn usable() -> Result<(), &'static str> {
        // SAFETY: cpuid is available on every x86_64 CPU.
        let max_extended = unsafe { __cpuid(0x8000_0000) }.eax;
        if max_extended < 0x8000_0007 {
            return Err("the CPU does not report whether its TSC is invariant");
        }
        // SAFETY: leaf 0x80000007 exists (checked above).
        if unsafe { __cpuid(0x8000_0007) }.edx & (1 << 8) == 0 {
            return Err("the CPU's TSC is not invariant");
        }
        let current = std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .unwrap_or_default();
        if current.trim() != "tsc" {
            return Err("the kernel's clocksource is not tsc (it does not trust the TSC here)");
        }
        Ok(())
    }

    /// Nanoseconds per tick (32.32 fixed point), from 10 ms of CLOCK_MONOTONIC.
    pub fn calibrate_q32() -> Result<u64, &'static str> {
        super::calibrate_q32_from(|| {
            let before = now_ns();
            let tsc = read();
            (before, tsc, now_ns())
        })
    }
}

/// One reading of the TSC bracketed by two of CLOCK_MONOTONIC: (ns before, ticks, ns after).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
type Reading = (u64, u64, u64);

/// How long the calibration measures.
const CALIBRATION_NS: u64 = 10_000_000;
/// The widest bracket a calibration accepts: a thread preempted between its reads (a busy
/// machine, a CI runner) makes a wide one, and pairing its TSC value with the wrong instant once
/// skewed every figure of a process (a 100 ms mix ran for seconds). Two brackets this wide
/// still leave the rate within 0.1 %; a normal one is well under 1 µs.
const WIDEST_BRACKET_NS: u64 = 10_000;

/// The calibration itself, over any source of readings (the tests give it a fake one): at
/// each end of the interval the tightest of up to 64 readings, its ticks paired with the middle
/// of its bracket.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn calibrate_q32_from(mut read: impl FnMut() -> Reading) -> Result<u64, &'static str> {
    let (ns0, tsc0) = tightest(&mut read)?;
    while read().0 < ns0 + CALIBRATION_NS {
        std::hint::spin_loop();
    }
    let (ns1, tsc1) = tightest(&mut read)?;
    let ticks = tsc1.saturating_sub(tsc0);
    if ticks == 0 {
        return Err("the TSC did not advance");
    }
    let q32 = (((ns1 - ns0) as u128) << 32) / ticks as u128;
    // Between 100 MHz and 20 GHz, or something is wrong with the reading.
    if !((1u128 << 32) / 20..=(10u128 << 32)).contains(&q32) {
        return Err("the TSC's measured rate is implausible");
    }
    Ok(q32 as u64)
}

/// The tightest of up to 64 readings (the first under 1 µs ends the search), as (ns, ticks).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn tightest(read: &mut impl FnMut() -> Reading) -> Result<(u64, u64), &'static str> {
    let mut best = read();
    for _ in 1..64 {
        if best.2 - best.0 <= 1_000 {
            break;
        }
        let reading = read();
        if reading.2 - reading.0 < best.2 - best.0 {
            best = reading;
        }
    }
    let (before, ticks, after) = best;
    if after - before > WIDEST_BRACKET_NS {
        return Err("the machine was too busy to calibrate the TSC against CLOCK_MONOTONIC");
    }
    Ok((before + (after - before) / 2, ticks))
}

#[cfg(not(target_arch = "x86_64"))]
mod tsc {
    pub fn read() -> u64 {
        super::now_ns()
    }

    pub fn usable() -> Result<(), &'static str> {
        Err("a TSC clock exists only on x86_64")
    }

    pub fn calibrate_q32() -> Result<u64, &'static str> {
        Err("a TSC clock exists only on x86_64")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clock's measure of a busy interval agrees with CLOCK_MONOTONIC's.
    fn agrees_with_monotonic(clock: Clock) {
        let (t0, n0) = (clock.ticks(), now_ns());
        while now_ns() < n0 + 30_000_000 {
            std::hint::spin_loop();
        }
        let (t1, n1) = (clock.ticks(), now_ns());
        let measured = clock.ns(t1 - t0) as f64;
        let truth = (n1 - n0) as f64;
        assert!(
            (measured / truth - 1.0).abs() < 0.002,
            "{clock:?}: {measured} ns against {truth} ns"
        );
    }

    #[test]
    fn the_tsc_clock_agrees_with_the_monotonic_clock_or_says_why_not() {
        agrees_with_monotonic(Clock::monotonic());
        match Clock::tsc() {
            Ok(clock) => agrees_with_monotonic(clock),
            // Hosts without an invariant TSC fall back, with a reason.
            Err(why) => assert!(!why.is_empty()),
        }
        let info = Clock::info();
        assert!(info.ticks_per_s > 1e8, "{info:?}");
        assert_eq!(
            info.source == ClockSource::Tsc,
            info.fallback_reason.is_none()
        );
        // A tick of either clock is at most a microsecond and never below the stored 1 ns.
        for clock in [Clock::monotonic(), Clock::get()] {
            let r = clock.resolution_ns();
            assert!((1.0..=1000.0).contains(&r), "{clock:?}: {r} ns");
        }
    }

    /// A fake TSC at 2.5 ticks per ns whose readings take 40 ns, and whose thread is
    /// preempted for `stalls[i]` ns between the ns and the ticks of reading i.
    fn fake_readings(stalls: Vec<u64>) -> impl FnMut() -> Reading {
        let (mut now, mut i) = (1_000_000_000u64, 0usize);
        move || {
            let before = now;
            now += 20 + stalls.get(i).copied().unwrap_or(0);
            i += 1;
            let ticks = now * 5 / 2;
            now += 20;
            (before, ticks, now)
        }
    }

    #[test]
    fn a_reading_preempted_mid_calibration_does_not_skew_the_clock() {
        let exact = (2u128 << 32) / 5;
        // Undisturbed.
        let q32 = calibrate_q32_from(fake_readings(vec![])).unwrap() as u128;
        assert!(q32.abs_diff(exact) <= 1, "{q32} against {exact}");
        // The first reading at the start stalls 5 ms: pairing its ticks with the middle of its
        // bracket would make every time a third too long.
        let q32 = calibrate_q32_from(fake_readings(vec![5_000_000])).unwrap() as u128;
        assert!(q32.abs_diff(exact) <= 1, "{q32} against {exact}");
        // Nor does a stall at the end (it would make every time 0.6 of what it was).
        let mut stalls = vec![0; 250_002];
        stalls.extend([30_000_000, 30_000_000]);
        let q32 = calibrate_q32_from(fake_readings(stalls)).unwrap() as u128;
        assert!(q32.abs_diff(exact) <= 1, "{q32} against {exact}");
        // Every reading stalls: no calibration rather than a wrong one.
        let err = calibrate_q32_from(fake_readings(vec![20_000; 100])).unwrap_err();
        assert!(err.contains("too busy"), "{err}");
    }

    #[test]
    fn converting_ticks_is_exact_for_the_monotonic_clock() {
        let clock = Clock::monotonic();
        for ns in [0, 1, 999, 1 << 40, u64::MAX >> 1] {
            assert_eq!(clock.ns(ns), ns);
        }
        assert_eq!(clock.ticks_per_ns(), 1.0);
        // The process's clock (the TSC where it can be): a millisecond turned into ticks and
        // back is a millisecond, to a nanosecond.
        let clock = Clock::get();
        let ticks = (1e6 * clock.ticks_per_ns()).round() as u64;
        assert!(clock.ns(ticks).abs_diff(1_000_000) <= 1, "{clock:?}");
    }

    #[test]
    fn clock_is_monotonic() {
        let a = now_ns();
        let b = now_ns();
        assert!(b >= a);
    }

    #[test]
    fn rfc3339_known_instants() {
        assert_eq!(rfc3339_utc(0.0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400.0), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_795_306_015.0), "2026-11-22T00:06:55Z");
    }
}
