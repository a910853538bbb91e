//! The workloads' randomness: the generator (`fsbench_measure::rng::Rng`, xoshiro256**), a
//! fresh seed from the kernel, and a permutation of offsets in O(1) memory.

pub use fsbench_measure::rng::Rng;

/// A seed from the kernel's random source (getrandom(2)), falling back to the clock: 63 bits,
/// below 2^63, so that the seed a run stores can be given back to run it again alike
/// (`--seed`, a plan's `seed`: a plan holds signed 64-bit integers, as TOML does).
pub fn fresh_seed() -> u64 {
    let mut bytes = [0u8; 8];
    // SAFETY: `bytes` is a valid, writable 8-byte buffer.
    let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    let seed = if n == 8 {
        u64::from_le_bytes(bytes)
    } else {
        fsbench_measure::clock::now_ns() ^ u64::from(std::process::id()) << 32
    };
    seed >> 1
}

/// Visits every index in `0..n` exactly once, in a pseudo-random order, in O(1) memory.
///
/// A full-period linear congruential sequence modulo the next power of two `m >= n`
/// (Hull-Dobell: odd increment, multiplier = 1 mod 4), skipping values `>= n` ("cycle walking").
/// When `n` is a power of two nothing is skipped.
#[derive(Debug, Clone, Copy)]
pub struct Permutation {
    n: u64,
    mask: u64,
    increment: u64,
    state: u64,
}

const LCG_MULTIPLIER: u64 = 6_364_136_223_846_793_005;

impl Permutation {
    /// A new random order over `0..n` (n >= 1), chosen by `rng`.
    pub fn new(n: u64, rng: &mut Rng) -> Permutation {
        let m = n.max(1).next_power_of_two();
        Permutation {
            n: n.max(1),
            mask: m - 1,
            increment: rng.next_u64() | 1,
            state: rng.next_u64() & (m - 1),
        }
    }

    /// The next index of the order; after `n` calls every index has been returned once.
    #[inline(always)]
    pub fn next_index(&mut self) -> u64 {
        loop {
            self.state = self
                .state
                .wrapping_mul(LCG_MULTIPLIER)
                .wrapping_add(self.increment)
                & self.mask;
            if self.state < self.n {
                return self.state;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every seed a run draws can be given back to run it again alike (`--seed`, a plan's
    /// `seed`), and plans hold signed 64-bit integers: none reaches 2^63. (Before: half of
    /// them did, and `--seed` of one was refused.)
    #[test]
    fn a_fresh_seed_fits_a_plan() {
        let seeds: Vec<u64> = (0..1000).map(|_| fresh_seed()).collect();
        assert!(seeds.iter().all(|&s| s <= i64::MAX as u64), "{seeds:?}");
        assert!(seeds.iter().any(|&s| s > 1 << 62), "63 bits drawn");
    }

    #[test]
    fn permutation_visits_every_index_once() {
        let mut rng = Rng::new(1);
        for n in [1u64, 2, 7, 64, 100, 1000, 4096] {
            let mut p = Permutation::new(n, &mut rng);
            let mut seen = vec![false; n as usize];
            for _ in 0..n {
                let i = p.next_index() as usize;
                assert!(!seen[i], "n={n}: index {i} twice");
                seen[i] = true;
            }
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn permutation_is_not_sequential() {
        let mut rng = Rng::new(3);
        let mut p = Permutation::new(1024, &mut rng);
        let order: Vec<u64> = (0..1024).map(|_| p.next_index()).collect();
        let ascending = order.windows(2).filter(|w| w[1] == w[0] + 1).count();
        assert!(ascending < 50, "{ascending} sequential steps");
    }
}
