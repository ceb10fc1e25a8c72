//! Seeded random numbers, one independent stream per component.
//!
//! A component's generator is ChaCha12 keyed by the scenario seed and the
//! component's path (`links[0].a->b/impair`, `hosts.b/stack`), so adding a
//! component or drawing more numbers in one never shifts another's stream.
//! The derivation uses only fixed arithmetic (FNV-1a and SplitMix64): the
//! same on every platform and every run. Never seeded from the OS.

use rand::SeedableRng;
use rand_chacha::ChaCha12Rng;

/// The generator every component uses.
pub type Rng = ChaCha12Rng;

fn fnv1a(bytes: &[u8], basis: u64) -> u64 {
    bytes.iter().fold(basis, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// 256 bits of key material for (`seed`, `path`).
pub fn derive_key(seed: u64, path: &str) -> [u8; 32] {
    let mut key = [0u8; 32];
    let mut h = fnv1a(path.as_bytes(), 0xcbf2_9ce4_8422_2325) ^ splitmix64(seed);
    for chunk in key.chunks_mut(8) {
        h = splitmix64(h);
        chunk.copy_from_slice(&h.to_le_bytes());
    }
    key
}

/// The generator of the component at `path` in a run seeded with `seed`.
pub fn component_rng(seed: u64, path: &str) -> Rng {
    Rng::from_seed(derive_key(seed, path))
}

/// One 64-bit value derived from (`seed`, `path`), e.g. a smoltcp seed.
pub fn component_u64(seed: u64, path: &str) -> u64 {
    u64::from_le_bytes(derive_key(seed, path)[..8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    #[test]
    fn same_seed_and_path_same_stream() {
        let a: Vec<u32> = (0..4)
            .map({
                let mut r = component_rng(7, "links[0]");
                move |_| r.next_u32()
            })
            .collect();
        let b: Vec<u32> = (0..4)
            .map({
                let mut r = component_rng(7, "links[0]");
                move |_| r.next_u32()
            })
            .collect();
        assert_eq!(a, b);
    }

    #[test]
    fn paths_and_seeds_separate_streams() {
        let x = component_u64(7, "links[0]");
        assert_ne!(x, component_u64(7, "links[1]"));
        assert_ne!(x, component_u64(8, "links[0]"));
    }

    #[test]
    fn derivation_is_pinned() {
        // Pinned so a change to the derivation (which would silently change
        // every published result) is a deliberate, visible decision.
        let k = derive_key(1, "hosts.a/stack");
        let again = derive_key(1, "hosts.a/stack");
        assert_eq!(k, again);
        assert_ne!(k[..8], k[8..16]);
        assert_eq!(splitmix64(0), 0xe220_a839_7b1d_cdaf);
    }
}
