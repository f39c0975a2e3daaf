//! The percentiles the reports print (nearest rank), at the edges the
//! open loop's p99.9 reaches.

use a2a_tower_load::Latencies;

#[test]
fn nearest_rank_percentiles() {
    let mut l = Latencies::default();
    // Recorded out of order: 1..=1000 µs.
    for us in (1..=1000).rev() {
        l.record_us(us);
    }
    assert_eq!(l.percentile_us(50.0), 500);
    assert_eq!(l.percentile_us(99.0), 990);
    assert_eq!(l.percentile_us(99.9), 999);
    assert_eq!(l.percentile_us(100.0), 1000);
    assert_eq!(l.percentile_us(0.0), 1);
    // One slow request in 1000 is above p99.9 only if it is the max.
    l.record_us(1_000_000);
    assert_eq!(l.percentile_us(99.9), 1000);
    assert_eq!(l.max_us(), 1_000_000);
}

#[test]
fn empty_and_merged() {
    let mut l = Latencies::default();
    assert_eq!((l.percentile_us(99.0), l.max_us(), l.len()), (0, 0, 0));
    let mut other = Latencies::default();
    other.record(std::time::Duration::from_millis(150));
    other.record_us(20);
    l.record_us(10);
    l.merge(other);
    assert_eq!(l.len(), 3);
    assert_eq!(l.percentile_us(50.0), 20);
    assert_eq!(l.over(std::time::Duration::from_millis(100)), 1);
}
