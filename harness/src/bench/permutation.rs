//! Random permutations of large index ranges, drawn cache by cache.
//!
//! The pointer chase's rings and the random gather's indices need a uniformly random order of
//! up to tens of millions of entries. A Fisher–Yates shuffle swaps each entry with one at a
//! random place in the whole array, and past the caches every swap waits on memory: 80 ns an
//! entry on the 2-core Intel Xeon VM, 1.8 s for the gather sweep's 22 million indices, a
//! tenth of a quick calibration. Here the entries are dealt to buckets instead, each at
//! random, the buckets small enough for a core's L2, and each bucket is shuffled where it
//! lies: every step then hits a cache.
//!
//! The result is as uniform as one shuffle's. A given order of the n entries arises from
//! bucket sizes s_1 … s_B (Σ s_j = n) in exactly one way: its first s_1 entries were dealt to
//! the first bucket, and so on, with probability B^−n, then shuffled into that order with
//! probability Π 1/s_j!. The sum of B^−n·Π 1/s_j! over the bucket sizes does not depend on
//! the order, so every order is equally likely (Sanders, "Random permutations on
//! distributed, external and hierarchical memory", 1998).

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Entries per bucket on average: 128 KiB of 32-bit entries, which a core's L2 holds.
const BUCKET_ENTRIES: usize = 1 << 15;

/// A uniformly random order of 0..n − 1 drawn from `seed`.
pub fn random_permutation(n: usize, seed: u64) -> Vec<u32> {
    permutation_in_buckets(n, seed, BUCKET_ENTRIES)
}

/// [`random_permutation`] with buckets of `bucket_entries` entries on average.
fn permutation_in_buckets(n: usize, seed: u64, bucket_entries: usize) -> Vec<u32> {
    assert!(
        u32::try_from(n).is_ok(),
        "{n} entries do not fit 32-bit indices"
    );
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let buckets = n.div_ceil(bucket_entries.max(1)).max(1);
    let mut dealt: Vec<Vec<u32>> = (0..buckets)
        .map(|_| Vec::with_capacity(n / buckets + n / buckets / 8 + 16))
        .collect();
    for v in 0..n as u32 {
        dealt[rng.gen_range(0..buckets)].push(v);
    }
    let mut order = Vec::with_capacity(n);
    for mut bucket in dealt {
        bucket.shuffle(&mut rng);
        order.extend_from_slice(&bucket);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_is_a_permutation_fixed_by_its_seed() {
        for n in [0, 1, 2, 1000, 100_003] {
            let p = random_permutation(n, 7);
            let mut sorted = p.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..n as u32).collect::<Vec<u32>>(), "n = {n}");
            assert_eq!(p, random_permutation(n, 7));
        }
        assert_ne!(random_permutation(1000, 7), random_permutation(1000, 8));
        let p = random_permutation(100_003, 7);
        assert_ne!(p, (0..100_003).collect::<Vec<u32>>(), "shuffled");
    }

    #[test]
    fn every_order_is_about_equally_likely_with_many_buckets() {
        // Four entries in buckets of one on average (four buckets): each of the 24 orders
        // 2,000 times in 48,000 draws, σ ≈ 44; a missing bucket term would skew some by
        // hundreds (dealing alone, without the shuffle, never reverses two entries that
        // share a bucket).
        let mut counts = std::collections::HashMap::new();
        for seed in 0..48_000u64 {
            *counts
                .entry(permutation_in_buckets(4, seed, 1))
                .or_insert(0usize) += 1;
        }
        assert_eq!(counts.len(), 24);
        for (order, &c) in &counts {
            assert!((1_750..=2_250).contains(&c), "{order:?} drawn {c} times");
        }
    }
}
