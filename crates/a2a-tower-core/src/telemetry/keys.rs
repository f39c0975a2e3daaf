//! Metric keys built once per label set: a labelled record through the
//! `metrics` macros allocates its label vector and hashes its key on every
//! call, which was most of what the metrics cost per request.
//!
//! The label values are `&'static str`s, so the label sets a process uses are
//! few and fixed by its code; each is built once, interned in a global map,
//! and kept for the life of the process. Each thread remembers the sets it
//! met by the addresses of their strings, so the common path takes no lock.
//!
//! ```
//! # #[cfg(feature = "metrics")] {
//! use a2a_tower_core::telemetry::record_request;
//! // Keys for ("SendMessage", "jsonrpc", "ok") are built on the first call only.
//! record_request("SendMessage", "jsonrpc", "ok", std::time::Duration::from_millis(1));
//! record_request("SendMessage", "jsonrpc", "ok", std::time::Duration::from_millis(2));
//! # }
//! ```

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Mutex;

use metrics::{Key, Label};

/// Up to three labels; a pair whose name is empty is left out.
pub(super) type Labels = [(&'static str, &'static str); 3];

/// The two keys (`names[0]`, `names[1]`) with `labels`, built on the first
/// call for this label set and the same `'static` pair after it.
pub(super) fn cached(names: [&'static str; 2], labels: Labels) -> &'static [Key; 2] {
    let id = Id::of(names, labels);
    LOCAL.with(|local| {
        let mut local = local.borrow_mut();
        if let Some((_, keys)) = local.iter().find(|(seen, _)| *seen == id) {
            return *keys;
        }
        let keys = interned(names, labels);
        // A thread meets few label sets; past the cap it asks the map.
        if local.len() < LOCAL_CAP {
            local.push((id, keys));
        }
        keys
    })
}

const LOCAL_CAP: usize = 256;

thread_local! {
    static LOCAL: RefCell<Vec<(Id, &'static [Key; 2])>> = const { RefCell::new(Vec::new()) };
}

/// A label set by the addresses and lengths of its strings: two equal sets
/// from different literals get two ids and one interned pair.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Id([(usize, usize); 8]);

impl Id {
    fn of(names: [&'static str; 2], labels: Labels) -> Self {
        let at = |s: &str| (s.as_ptr() as usize, s.len());
        let [(a, b), (c, d), (e, f)] = labels;
        Id([
            at(names[0]),
            at(names[1]),
            at(a),
            at(b),
            at(c),
            at(d),
            at(e),
            at(f),
        ])
    }
}

type Interned = HashMap<([&'static str; 2], Labels), &'static [Key; 2]>;

fn interned(names: [&'static str; 2], labels: Labels) -> &'static [Key; 2] {
    static MAP: Mutex<Option<Interned>> = Mutex::new(None);
    let mut map = MAP.lock().unwrap_or_else(|e| e.into_inner());
    *map.get_or_insert_with(HashMap::new)
        .entry((names, labels))
        .or_insert_with(|| {
            let labels: &'static [Label] = Box::leak(
                labels
                    .iter()
                    .filter(|(name, _)| !name.is_empty())
                    .map(|&(name, value)| Label::from_static_parts(name, value))
                    .collect(),
            );
            Box::leak(Box::new(names.map(|n| Key::from_static_parts(n, labels))))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pair_per_label_set_whatever_the_literal() {
        let a = cached(["a_total", "a_seconds"], [("op", "x"), ("", ""), ("", "")]);
        let again = cached(["a_total", "a_seconds"], [("op", "x"), ("", ""), ("", "")]);
        assert!(std::ptr::eq(a, again));
        // The same text at another address: a new id, the same interned keys.
        let owned: &'static str = Box::leak(String::from("x").into_boxed_str());
        let b = cached(
            ["a_total", "a_seconds"],
            [("op", owned), ("", ""), ("", "")],
        );
        assert!(std::ptr::eq(a, b));
        let other = cached(["a_total", "a_seconds"], [("op", "y"), ("", ""), ("", "")]);
        assert!(!std::ptr::eq(a, other));
    }

    #[test]
    fn keys_carry_the_labels_without_the_empty_ones() {
        let [count, seconds] = cached(
            ["b_total", "b_seconds"],
            [("operation", "Get"), ("outcome", "ok"), ("", "")],
        );
        assert_eq!(count.name(), "b_total");
        assert_eq!(seconds.name(), "b_seconds");
        let labels: Vec<_> = count.labels().map(|l| (l.key(), l.value())).collect();
        assert_eq!(labels, [("operation", "Get"), ("outcome", "ok")]);
        assert_eq!(
            *count,
            Key::from_parts(
                "b_total",
                [("operation", "Get"), ("outcome", "ok")].as_slice()
            )
        );
    }
}
