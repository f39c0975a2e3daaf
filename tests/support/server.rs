//! Spawning a built example binary as a server for end-to-end tests, and
//! stopping it: killed as in a crash, or with SIGINT as by Ctrl-C. A server
//! started with [`Server::start_capturing`] also keeps what it writes on
//! stderr, for tests that count the lines a process printed. Any other
//! program that prints the same `listening on` line can be started and
//! guarded the same way ([`Server::start_command`]).
//!
//! The example must already be built with the test's profile and features
//! (`cargo build --examples --all-features`, which `scripts/test.sh` does before the
//! tests); a missing binary fails the test with that instruction.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a server may take to print its address, or to exit after SIGINT.
const PATIENCE: Duration = Duration::from_secs(30);

/// The path of a built example binary of this test's profile:
/// `target/<profile>/deps/<test>` → `target/<profile>/examples/<name>`.
pub(crate) fn example_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test binary lives in target/<profile>/deps");
    let bin = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "the example binary {} is missing: build it first with \
         `cargo build --examples --all-features` (same profile as the tests)",
        bin.display()
    );
    bin
}

/// A loopback port nobody listens on any more (bound, then released).
pub(crate) fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A fresh, empty directory under the system temp dir, removed when dropped.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "a2a-tower-{tag}-{}-{n}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("create a temp dir");
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running example server, killed (and reaped) when dropped, so a failing
/// test leaves no process behind.
pub(crate) struct Server {
    /// The example's name.
    pub(crate) name: String,
    child: Child,
    /// `http://ADDR` as the server printed it.
    pub(crate) base: String,
    /// The data directory given to the server when the caller set none
    /// (`A2A_DATA_DIR`), removed after the server is killed.
    _data: Option<TempDir>,
    /// With [`Server::start_capturing`]: the stderr lines read so far, and
    /// the thread reading them (it ends when the process does).
    stderr: Option<(Arc<Mutex<String>>, JoinHandle<()>)>,
}

impl Server {
    /// Starts the example `name` on a free loopback port
    /// (`A2A_ADDR=127.0.0.1:0`) with a fresh data directory
    /// (`A2A_DATA_DIR`, for the examples that keep tasks on disk) and waits
    /// for its `listening on http://ADDR` line.
    pub(crate) fn start(name: &str) -> Self {
        Self::start_with(name, &[])
    }

    /// [`start`](Self::start) with extra environment variables; an
    /// `A2A_DATA_DIR` among them replaces the fresh data directory.
    pub(crate) fn start_with(name: &str, envs: &[(&str, &str)]) -> Self {
        Self::spawn(name, envs, false)
    }

    /// [`start_with`](Self::start_with), keeping the server's stderr (still
    /// echoed to the test's stderr); [`kill_capturing`](Self::kill_capturing)
    /// returns it.
    pub(crate) fn start_capturing(name: &str, envs: &[(&str, &str)]) -> Self {
        Self::spawn(name, envs, true)
    }

    fn spawn(name: &str, envs: &[(&str, &str)], capture: bool) -> Self {
        let bin = example_binary(name);
        let mut cmd = Command::new(&bin);
        let data = if envs.iter().any(|(k, _)| *k == "A2A_DATA_DIR") {
            None
        } else {
            let dir = TempDir::new(name);
            cmd.env("A2A_DATA_DIR", &dir.0);
            Some(dir)
        };
        cmd.envs(envs.iter().copied())
            .env("A2A_ADDR", "127.0.0.1:0");
        Self::run(name, cmd, data, capture)
    }

    /// Starts `cmd`, any program that binds a free 127.0.0.1 port and
    /// prints `listening on http://ADDR` as its first stdout line (stderr
    /// is inherited), and waits for that line. `name` labels failures.
    pub(crate) fn start_command(name: &str, cmd: Command) -> Self {
        Self::run(name, cmd, None, false)
    }

    fn run(name: &str, mut cmd: Command, data: Option<TempDir>, capture: bool) -> Self {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(if capture {
                Stdio::piped()
            } else {
                Stdio::inherit()
            })
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name} ({cmd:?}): {e}"));
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().map(|pipe| {
            let text = Arc::new(Mutex::new(String::new()));
            let kept = text.clone();
            let reader = std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    eprintln!("{line}");
                    let mut kept = kept.lock().unwrap_or_else(|p| p.into_inner());
                    kept.push_str(&line);
                    kept.push('\n');
                }
            });
            (text, reader)
        });
        // From here on the guard owns the child: a panic below kills it.
        let mut server = Self {
            name: name.to_owned(),
            child,
            base: String::new(),
            _data: data,
            stderr,
        };
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let first = lines.next();
            let _ = tx.send(first);
            // Keep draining so the server never blocks on a full pipe.
            for _ in lines {}
        });
        let line = match rx.recv_timeout(PATIENCE) {
            Ok(Some(Ok(line))) => line,
            Ok(other) => panic!("{name} exited or wrote no address line: {other:?}"),
            Err(_) => panic!("{name} printed no address within {PATIENCE:?}"),
        };
        let base = line
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from {name}: {line:?}"));
        assert!(
            base.starts_with("http://127.0.0.1:"),
            "unexpected address line: {line:?}"
        );
        assert!(!base.ends_with(":0"), "{name}: prints the bound port");
        server.base = base.to_owned();
        server
    }

    /// Sends SIGINT (Ctrl-C) and asserts a clean exit within 30 s.
    pub(crate) fn stop(mut self) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-INT", &pid]).status();
        assert!(sent.is_ok_and(|s| s.success()), "{}: kill -INT", self.name);
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "{}: still running after SIGINT",
                self.name
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "{}: exit status {status}", self.name);
    }

    /// Kills the server with SIGKILL (on unix) and reaps it: no shutdown
    /// code runs, as in a crash.
    pub(crate) fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// [`kill`](Self::kill), then everything the server wrote on stderr
    /// (started with [`start_capturing`](Self::start_capturing)).
    pub(crate) fn kill_capturing(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let (text, reader) = self
            .stderr
            .take()
            .unwrap_or_else(|| panic!("{}: stderr was not captured", self.name));
        // The pipe closes with the process, which ends the reader.
        reader.join().expect("the stderr reader");
        let text = text.lock().unwrap_or_else(|p| p.into_inner());
        text.clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
