//! Memory of a build as Linux reports it: the peak resident set (VmHWM) and a sampled peak of
//! anonymous memory (`RssAnon`), which is what a build really needs. Elsewhere both read 0.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// Starts a new peak for `peak_memory_bytes` (Linux resets VmHWM when 5 is written to
/// clear_refs); where that fails the peak stays the process's.
pub(super) fn reset_peak_memory() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident set size of this process (VmHWM), 0 if unknown.
pub fn peak_memory_bytes() -> u64 {
    status_bytes("VmHWM:")
}

/// Samples this process's anonymous resident memory (`RssAnon`) while it lives and keeps the
/// largest value: the memory a build needs, where VmHWM also counts the pages of the mapped
/// sub-tables, which the kernel drops under pressure and reads again (Linux has no peak of
/// its own for it). Sampled every 10 ms: the large arrays live for seconds.
pub(super) struct AnonPeak {
    stop: Arc<AtomicBool>,
    sampler: Option<std::thread::JoinHandle<u64>>,
}

impl AnonPeak {
    pub(super) fn start() -> AnonPeak {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let sampler = std::thread::spawn(move || {
            let mut peak = 0;
            loop {
                peak = peak.max(status_bytes("RssAnon:"));
                if flag.load(Relaxed) {
                    return peak;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        });
        AnonPeak {
            stop,
            sampler: Some(sampler),
        }
    }

    pub(super) fn finish(mut self) -> u64 {
        self.stop.store(true, Relaxed);
        let sampler = self.sampler.take().expect("finished once");
        sampler.join().unwrap_or(0)
    }
}

/// A build that fails stops its sampler too.
impl Drop for AnonPeak {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
    }
}

/// A memory figure of `/proc/self/status` (`key` with its colon), bytes; 0 if unknown.
fn status_bytes(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}
