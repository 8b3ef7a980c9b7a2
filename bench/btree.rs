// SPDX-License-Identifier: GPL-2.0-or-later
// A Rust program's allocation pattern (bench/programs.sh): a BTreeMap's
// nodes and a String per value through Rust's global allocator (glibc's
// malloc), inserted in pseudo-random order (xorshift, fixed seed, so every
// run does the same work), a third of the key space removed (nodes merged
// and freed), then a range walked.
// Usage: btree [KEYS] (default 600000).
use std::collections::BTreeMap;

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(600_000);
    let mut m: BTreeMap<u64, String> = BTreeMap::new();
    let mut x: u64 = 88172645463325252;
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        m.insert(x % (n * 4), format!("v{}", i));
    }
    let mut removed = 0u64;
    for k in (0..n * 4).step_by(3) {
        if m.remove(&k).is_some() {
            removed += 1;
        }
    }
    let sum = m
        .range(n..n * 3)
        .map(|(k, v)| k ^ v.len() as u64)
        .fold(0u64, |a, b| a.wrapping_add(b));
    println!("{} {} {}", m.len(), removed, sum);
}
