//! A monotonic clock in whole nanoseconds, cheap enough to read once per operation.

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

#[cfg(test)]
mod tests {
    use super::*;

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
