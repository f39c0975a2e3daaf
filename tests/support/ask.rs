//! The `ask` example as a process: run it with arguments, bounded in time,
//! and read what it printed and its exit status.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::server::example_binary;

/// How long one `ask` run may take.
const PATIENCE: Duration = Duration::from_secs(30);

/// What one `ask` run printed, and its exit status.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `ask` with `args`, killing it (and failing) after [`PATIENCE`].
pub(crate) fn ask(args: &[&str]) -> Run {
    let bin = example_binary("ask");
    let mut child = Command::new(&bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            pipe.read_to_string(&mut s).expect("utf-8 output");
            s
        })
    };
    let out = read(Box::new(child.stdout.take().expect("piped stdout")));
    let err = read(Box::new(child.stderr.take().expect("piped stderr")));
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ask {args:?} did not exit within {PATIENCE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let run = Run {
        code: status.code().expect("an exit code, not a signal"),
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    };
    eprintln!("ask {args:?} -> {run:?}");
    run
}
