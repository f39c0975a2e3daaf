//! The payloads of the log's notifications: what a NOTIFY on the log's
//! channel says, written by the committer (one per batch, see [`Batch`]) and
//! by the locked path (one per task, see [`single`]), read by the listener
//! ([`parse`]).
//!
//! - `*<instance>;<seq>:<len>:<task id>;…` (schema 7): a batch of `instance`
//!   committed each task up to its sequence number (`len` is the task id's
//!   length in bytes, so a task id may hold any character NOTIFY carries).
//! - `<instance>.<seq>:<task id>`: one task (the locked path; hosts of schema
//!   6 sent every commit so).
//! - `<instance>:<task id>`: one task without a sequence number (an older
//!   version's).
//! - empty: wake every watcher (a task id NOTIFY cannot carry: a NUL, or
//!   over its 8000-byte payload limit).

/// A batch's payloads are cut below NOTIFY's 8000-byte limit.
const LIMIT: usize = 7900;

/// What one notification says.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Notice<'a> {
    /// Wake every watcher.
    All,
    /// This log's own: its watchers were woken by its commit.
    Own,
    /// Another log committed each task, up to the sequence number when the
    /// payload names one.
    Tasks(Vec<(&'a str, Option<u64>)>),
}

/// The payload announcing that this log (`instance`) committed `task_id` up
/// to `seq`: `<instance>.<seq>:<task id>`, or empty for a task id NOTIFY
/// cannot carry.
pub(super) fn single(instance: &str, task_id: &str, seq: u64) -> String {
    if task_id.len() < 7000 && !task_id.contains('\0') {
        format!("{instance}.{seq}:{task_id}")
    } else {
        String::new()
    }
}

/// The payloads of one committed batch: every task it wrote, with the
/// sequence number each reached, in as few notifications as the payload
/// limit allows (one for a batch of up to about 150 tasks).
pub(super) struct Batch {
    instance: std::sync::Arc<str>,
    /// The payloads filled.
    payloads: Vec<String>,
    /// The payload being filled (empty: none yet).
    open: String,
    /// Some task id cannot be carried: an empty payload (wake every
    /// watcher) ends the batch.
    all: bool,
}

impl Batch {
    pub(super) fn new(instance: std::sync::Arc<str>) -> Self {
        Self {
            instance,
            payloads: Vec::new(),
            open: String::new(),
            all: false,
        }
    }

    /// Adds `task_id`, committed up to `seq`.
    pub(super) fn push(&mut self, task_id: &str, seq: u64) {
        use std::fmt::Write;
        let head = 1 + self.instance.len();
        // `;`, two numbers of at most 20 digits, two `:`.
        let entry = 43 + task_id.len();
        if head + entry > LIMIT || task_id.contains('\0') {
            self.all = true;
            return;
        }
        if !self.open.is_empty() && self.open.len() + entry > LIMIT {
            self.payloads.push(std::mem::take(&mut self.open));
        }
        if self.open.is_empty() {
            self.open.reserve(LIMIT.min(head + 16 * entry));
            self.open.push('*');
            self.open.push_str(&self.instance);
        }
        let _ = write!(self.open, ";{seq}:{}:{task_id}", task_id.len());
    }

    /// Nothing was added.
    pub(super) fn is_empty(&self) -> bool {
        self.open.is_empty() && self.payloads.is_empty() && !self.all
    }

    /// The payloads (none for an empty batch).
    pub(super) fn finish(mut self) -> Vec<String> {
        if !self.open.is_empty() {
            self.payloads.push(self.open);
        }
        if self.all {
            self.payloads.push(String::new());
        }
        self.payloads
    }
}

/// What `payload` says to the log `instance` (any format above; anything
/// malformed wakes every watcher).
pub(super) fn parse<'a>(payload: &'a str, instance: &str) -> Notice<'a> {
    if payload.is_empty() {
        return Notice::All;
    }
    if let Some(batch) = payload.strip_prefix('*') {
        let (from, mut rest) = batch.split_once(';').unwrap_or((batch, ""));
        if from == instance {
            return Notice::Own;
        }
        let mut tasks = Vec::new();
        while !rest.is_empty() {
            let Some((task_id, seq, after)) = entry(rest) else {
                return Notice::All;
            };
            tasks.push((task_id, Some(seq)));
            rest = match after.strip_prefix(';') {
                Some(r) if !r.is_empty() => r,
                None if after.is_empty() => after,
                _ => return Notice::All,
            };
        }
        return Notice::Tasks(tasks);
    }
    match payload.split_once(':') {
        Some((from, task_id)) => match from.split_once('.') {
            Some((i, _)) if i == instance => Notice::Own,
            Some((_, seq)) => Notice::Tasks(vec![(task_id, seq.parse().ok())]),
            None if from == instance => Notice::Own,
            None => Notice::Tasks(vec![(task_id, None)]),
        },
        None => Notice::Tasks(vec![(payload, None)]),
    }
}

/// One `<seq>:<len>:<task id>` at the start of `s`: the task id, the
/// sequence number and what follows.
fn entry(s: &str) -> Option<(&str, u64, &str)> {
    let (seq, s) = s.split_once(':')?;
    let (len, s) = s.split_once(':')?;
    let len: usize = len.parse().ok()?;
    Some((s.get(..len)?, seq.parse().ok()?, s.get(len..)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(tasks: &[(&str, u64)]) -> Vec<String> {
        let mut b = Batch::new("i1".into());
        for (t, s) in tasks {
            b.push(t, *s);
        }
        b.finish()
    }

    #[test]
    fn a_batch_is_one_payload_read_back_by_other_logs() {
        let odd = "t;1:2:x:é";
        let payloads = batch(&[("a", 1), (odd, 12), ("c", 3)]);
        assert_eq!(payloads, ["*i1;1:1:a;12:10:t;1:2:x:é;3:1:c"]);
        assert_eq!(
            parse(&payloads[0], "i2"),
            Notice::Tasks(vec![("a", Some(1)), (odd, Some(12)), ("c", Some(3))])
        );
        assert_eq!(parse(&payloads[0], "i1"), Notice::Own);
        assert!(batch(&[]).is_empty());
    }

    #[test]
    fn a_large_batch_is_cut_under_the_limit_and_odd_ids_wake_everyone() {
        let ids: Vec<String> = (0..400).map(|i| format!("{i:036}")).collect();
        let tasks: Vec<(&str, u64)> = ids.iter().map(|t| (t.as_str(), 7)).collect();
        let payloads = batch(&tasks);
        assert!(payloads.len() > 1, "{}", payloads.len());
        let mut read = Vec::new();
        for p in &payloads {
            assert!(p.len() <= LIMIT, "{}", p.len());
            let Notice::Tasks(t) = parse(p, "i2") else {
                panic!("{p}")
            };
            read.extend(t);
        }
        let want: Vec<(&str, Option<u64>)> = tasks.iter().map(|(t, s)| (*t, Some(*s))).collect();
        assert_eq!(read, want);
        // A NUL or a task id too long for a payload: one empty payload for
        // the batch, which wakes every watcher; the others as before.
        let long = "x".repeat(LIMIT);
        let payloads = batch(&[("a", 1), ("t\0", 2), (&long, 3), ("b", 4)]);
        assert_eq!(payloads, ["*i1;1:1:a;4:1:b", ""]);
        assert_eq!(parse("", "i2"), Notice::All);
    }

    #[test]
    fn older_payloads_are_still_read_and_malformed_ones_wake_everyone() {
        assert_eq!(single("i1", "t:1", 3), "i1.3:t:1");
        assert_eq!(
            parse("i1.3:t:1", "i2"),
            Notice::Tasks(vec![("t:1", Some(3))])
        );
        assert_eq!(parse("i1.3:t:1", "i1"), Notice::Own);
        assert_eq!(parse("i1:t", "i2"), Notice::Tasks(vec![("t", None)]));
        assert_eq!(parse("i1:t", "i1"), Notice::Own);
        assert_eq!(parse("i1.x:t", "i2"), Notice::Tasks(vec![("t", None)]));
        assert_eq!(parse("t", "i2"), Notice::Tasks(vec![("t", None)]));
        assert_eq!(single("i1", "t\0", 3), "");
        assert_eq!(single("i1", &"x".repeat(7000), 3), "");
        for bad in [
            "*i1;1:5:ab",
            "*i1;x:1:a",
            "*i1;1:1:ab",
            "*i1;1:1:a;",
            "*i1;1:1",
        ] {
            assert_eq!(parse(bad, "i2"), Notice::All, "{bad}");
        }
        assert_eq!(parse("*i1", "i2"), Notice::Tasks(vec![]));
    }
}
