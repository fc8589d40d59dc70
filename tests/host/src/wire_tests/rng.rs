// SPDX-License-Identifier: GPL-2.0

//! A small seeded PRNG (SplitMix64) for the random-input tests: no
//! dependency, and the same sequence on every run for a given seed.

pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`, or from `RRXE_WIRE_SEED` if set, printing
    /// the seed used so that a failure can be replayed.
    pub fn seeded(test: &str, seed: u64) -> Self {
        let seed = std::env::var("RRXE_WIRE_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(seed);
        println!("{test}: seed {seed} (replay: RRXE_WIRE_SEED={seed} cargo test {test} -- --nocapture)");
        Self(seed)
    }

    pub fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn u32(&mut self) -> u32 {
        (self.u64() >> 32) as u32
    }

    pub fn u8(&mut self) -> u8 {
        (self.u64() >> 56) as u8
    }

    pub fn bool(&mut self) -> bool {
        self.u64() & 1 != 0
    }

    /// A number below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.u64() % n as u64) as usize
    }

    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.u8()).collect()
    }
}
