//! A timer precise to a few µs on the runtime's own thread: a Linux timerfd
//! (a high-resolution kernel timer) in tokio's reactor. Tokio's own timer
//! rounds up to whole milliseconds, which at 5 000 requests/s would send
//! them in bursts, each up to 1 ms late; a second thread that sleeps
//! precisely would cost a cross-thread wake-up per request, and both of
//! its threads would have to be scheduled on time.

use std::io;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::time::Instant;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// A one-shot timer, re-armed by each [`Timer::sleep_until`].
pub struct Timer {
    fd: AsyncFd<OwnedFd>,
}

impl Timer {
    /// A new timer; needs a running tokio runtime with I/O enabled.
    pub fn new() -> io::Result<Timer> {
        // SAFETY: timerfd_create takes no pointers; a non-negative result
        // is a new descriptor that nothing else owns.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is open and owned by no one else (above).
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: the `OwnedFd` keeps its descriptor open, the same one,
        // for as long as the `AsyncFd` owns it.
        let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE)? };
        Ok(Timer { fd })
    }

    /// Waits until `t`, never returning before it; returns at once when `t`
    /// is past. Whether it waited is returned.
    pub async fn sleep_until(&self, t: Instant) -> io::Result<bool> {
        let now = Instant::now();
        if t <= now {
            return Ok(false);
        }
        let d = t - now;
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: d.as_secs() as libc::time_t,
                // At least 1 ns: an all-zero value would disarm the timer.
                tv_nsec: libc::c_long::from(d.subsec_nanos().max(1)),
            },
        };
        // SAFETY: the descriptor is a timerfd; `spec` lives across the call
        // and the old value is not asked for (null).
        let rc =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        loop {
            let mut ready = self.fd.readable().await?;
            let read = ready.try_io(|fd| {
                let mut expirations = [0u8; 8];
                // SAFETY: reads at most 8 bytes into an 8-byte buffer.
                let n = unsafe { libc::read(fd.as_raw_fd(), expirations.as_mut_ptr().cast(), 8) };
                if n < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(())
                }
            });
            match read {
                Ok(result) => {
                    // One-shot: nothing more to read until re-armed, so the
                    // next wait need not find that out with a read.
                    ready.clear_ready();
                    return result.map(|()| true);
                }
                // Readiness left from an earlier expiration: wait again.
                Err(_would_block) => continue,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn wakes_at_or_after_the_time_and_not_for_the_past() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let timer = Timer::new().unwrap();
            for us in [50, 300, 2_000, 300] {
                let t = Instant::now() + Duration::from_micros(us);
                assert!(timer.sleep_until(t).await.unwrap());
                assert!(Instant::now() >= t, "woke before the time");
            }
            let past = Instant::now();
            assert!(!timer.sleep_until(past).await.unwrap());
        });
    }
}
