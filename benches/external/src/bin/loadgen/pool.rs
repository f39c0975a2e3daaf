//! The open loop's connections: a request due now goes out on an idle
//! keep-alive connection, or on a new one when none is idle, up to
//! `--max-conns`; beyond that it waits in a queue for the first connection
//! that comes free. Nothing ever waits for a response before the next
//! request is sent: each connection's work runs in a task of its own.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Instant;

use crate::request::{self, Conn, Failure, Target};
use crate::stats::Stats;

/// Connections to one server, shared by the tasks on one thread.
pub struct Pool {
    target: Target,
    max: usize,
    idle: RefCell<Vec<Conn>>,
    /// Connections open or opening (idle ones included).
    open: Cell<usize>,
    /// The most ever open at once.
    peak: Cell<usize>,
    /// Due times of requests waiting for a connection.
    queue: RefCell<VecDeque<Instant>>,
    stats: Rc<RefCell<Stats>>,
}

impl Pool {
    /// A pool of at most `max` connections to `target`.
    pub fn new(target: Target, max: usize, stats: Rc<RefCell<Stats>>) -> Rc<Pool> {
        Rc::new(Pool {
            target,
            max: max.max(1),
            idle: RefCell::default(),
            open: Cell::new(0),
            peak: Cell::new(0),
            queue: RefCell::default(),
            stats,
        })
    }

    /// The most connections ever open at once.
    pub fn peak(&self) -> usize {
        self.peak.get()
    }

    /// Sends the request due at `due` now (its lag already counted).
    pub fn dispatch(self: &Rc<Self>, due: Instant) {
        let conn = loop {
            let c = self.idle.borrow_mut().pop();
            match c {
                // Closed by the server while idle: no longer open.
                Some(c) if c.is_closed() => self.open.set(self.open.get() - 1),
                other => break other,
            }
        };
        if conn.is_none() {
            if self.open.get() >= self.max {
                self.stats.borrow_mut().waited += 1;
                self.queue.borrow_mut().push_back(due);
                return;
            }
            self.open.set(self.open.get() + 1);
            self.peak.set(self.peak.get().max(self.open.get()));
        }
        tokio::task::spawn_local(self.clone().work(conn, due));
    }

    /// One connection's work: the request due at `due`, then every queued
    /// one, then back to the idle list (or closed, if it failed).
    async fn work(self: Rc<Self>, mut conn: Option<Conn>, mut due: Instant) {
        loop {
            let result = match &mut conn {
                Some(c) => request::send(c, &self.target).await,
                None => match request::connect(&self.target).await {
                    Ok(c) => request::send(conn.insert(c), &self.target).await,
                    Err(e) => Err(Failure::Transport(e)),
                },
            };
            match result {
                Ok(()) => self.stats.borrow_mut().done(due.elapsed()),
                Err(f) => {
                    self.stats.borrow_mut().failed();
                    request::note_error(&f);
                    if matches!(f, Failure::Transport(_)) {
                        conn = None;
                    }
                }
            }
            let next = self.queue.borrow_mut().pop_front();
            match next {
                Some(d) => due = d,
                None => break,
            }
        }
        match conn {
            Some(c) => self.idle.borrow_mut().push(c),
            None => self.open.set(self.open.get() - 1),
        }
    }
}
