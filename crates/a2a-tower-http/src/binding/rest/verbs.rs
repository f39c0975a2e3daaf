//! The verbs of each core HTTP+JSON path, taken from the operation table
//! ([`OperationKind::http_routes`]) at compile time.

use super::routes::Verb;
use crate::{HttpVerb, OperationKind};

/// The operations of one core path, by verb, from the operation table:
/// GET first, then POST, then DELETE (the order of `Allow`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Verbs([Option<(Verb, OperationKind)>; 3]);

impl Verbs {
    /// The table's routes with this path template; evaluated at compile
    /// time, so a path of no route fails the build.
    pub(super) const fn of(path: &str) -> Self {
        let order = [HttpVerb::Get, HttpVerb::Post, HttpVerb::Delete];
        let mut found = [None; 3];
        let mut n = 0;
        let mut v = 0;
        while v < order.len() {
            let mut k = 0;
            while k < OperationKind::ALL.len() {
                let kind = OperationKind::ALL[k];
                let routes = kind.http_routes();
                let mut r = 0;
                while r < routes.len() {
                    if routes[r].verb as u8 == order[v] as u8 && same(routes[r].path, path) {
                        found[n] = Some((Verb::of_table(order[v]), kind));
                        n += 1;
                    }
                    r += 1;
                }
                k += 1;
            }
            v += 1;
        }
        assert!(n > 0, "not a path of the operation table");
        Self(found)
    }

    pub(super) fn find(&self, verb: Option<Verb>) -> Option<(Verb, OperationKind)> {
        self.0
            .iter()
            .flatten()
            .copied()
            .find(|(v, _)| Some(*v) == verb)
    }

    /// The `Allow` header of the path.
    pub(super) fn allow(&self) -> &'static str {
        let has = |verb| self.0.iter().flatten().any(|(v, _)| *v == verb);
        match (has(Verb::Get), has(Verb::Post), has(Verb::Delete)) {
            (true, true, true) => "GET, POST, DELETE",
            (true, true, false) => "GET, POST",
            (true, false, true) => "GET, DELETE",
            (false, true, true) => "POST, DELETE",
            (false, true, false) => "POST",
            (false, false, true) => "DELETE",
            (_, false, false) => "GET",
        }
    }
}

/// `a == b`, at compile time.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_and_allow_of_a_path() {
        let subscribe = Verbs::of("/tasks/{id}:subscribe");
        assert_eq!(subscribe.allow(), "GET, POST");
        assert_eq!(
            subscribe.find(Some(Verb::Get)),
            Some((Verb::Get, OperationKind::SubscribeToTask))
        );
        assert_eq!(subscribe.find(Some(Verb::Delete)), None);
        let config = Verbs::of("/tasks/{id}/pushNotificationConfigs/{configId}");
        assert_eq!(config.allow(), "GET, DELETE");
        assert_eq!(
            config.find(Some(Verb::Delete)),
            Some((
                Verb::Delete,
                OperationKind::DeleteTaskPushNotificationConfig
            ))
        );
        assert_eq!(Verbs::of("/message:send").allow(), "POST");
        assert_eq!(Verbs::of("/tasks").allow(), "GET");
    }
}
