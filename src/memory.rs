//! Memory the machine can still give, and allocation that refuses instead of aborting. Option
//! values (`Hash`, `NalimovCache` times `Threads`) drive the engine's large allocations; a size the
//! machine cannot back must be refused with a message, not kill the engine.
//!
//! `try_reserve` alone is not enough on Linux: an overcommitting kernel grants any reservation and
//! kills the process later, when the pages are touched. So a request is first compared with the
//! memory the kernel says is available (`MemAvailable`, lowered by a cgroup v2 limit), and only
//! then reserved fallibly.
//!
//! The generator's arrays of gigabytes (`HugeArray`) can be kept when dropped and handed out
//! again to the next array of their size (`Recycling`), for the solves of one table one after
//! the other.

use std::fmt;

/// A request the machine cannot give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutOfMemory {
    pub requested: u64,
    /// What the kernel reported as available (None: not known, the allocator said no).
    pub available: Option<u64>,
}

impl fmt::Display for OutOfMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
        match self.available {
            Some(a) => write!(
                f,
                "{:.0} MiB requested, at most {:.0} MiB of the {:.0} MiB available can be given",
                mib(self.requested),
                mib(usable(a)),
                mib(a)
            ),
            None => write!(
                f,
                "{:.0} MiB requested, the allocator refused it",
                mib(self.requested)
            ),
        }
    }
}

impl std::error::Error for OutOfMemory {}

/// Bytes the kernel can give without swapping: `MemAvailable`, or less under a cgroup v2 memory
/// limit or an address-space limit (`ulimit -v`). None where none of these is known (not
/// Linux): only the allocator then decides.
pub fn available_bytes() -> Option<u64> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    [
        read("/proc/meminfo").and_then(|t| mem_available(&t)),
        cgroup_room(
            read("/sys/fs/cgroup/memory.max"),
            read("/sys/fs/cgroup/memory.current"),
        ),
        address_space_room(read("/proc/self/limits"), read("/proc/self/status")),
    ]
    .into_iter()
    .flatten()
    .min()
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut words = line.split_whitespace().skip(1);
    let value: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => value.checked_mul(1024),
        None => Some(value),
        Some(_) => None,
    }
}

/// Room left under a cgroup v2 limit (`memory.max` is "max" when there is none).
fn cgroup_room(max: Option<String>, current: Option<String>) -> Option<u64> {
    let max: u64 = max?.trim().parse().ok()?;
    let current: u64 = current?.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

/// Room left under the soft address-space limit of `/proc/self/limits` ("unlimited" when there
/// is none), given the process's size (`VmSize` of `/proc/self/status`).
fn address_space_room(limits: Option<String>, status: Option<String>) -> Option<u64> {
    let limits = limits?;
    let line = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max address space"))?;
    let limit: u64 = line.split_whitespace().next()?.parse().ok()?;
    let status = status?;
    let size = status.lines().find_map(|l| l.strip_prefix("VmSize:"))?;
    let size_kb: u64 = size.split_whitespace().next()?.parse().ok()?;
    Some(limit.saturating_sub(size_kb.saturating_mul(1024)))
}

/// Whether `bytes` more can be backed, leaving an eighth of what is available to the rest of the
/// engine and the system (search stacks, mapped tables, the GUI beside us). Arrays kept for
/// reuse (`Recycling`) are given back first where they stand in the way.
pub fn check(bytes: u64) -> Result<(), OutOfMemory> {
    match check_against(bytes, available_bytes()) {
        Err(_) if release_recycled() > 0 => check_against(bytes, available_bytes()),
        verdict => verdict,
    }
}

/// Bytes that `check` would grant now, the arrays kept for reuse counted as given back (None
/// where the available memory is not known).
pub fn usable_bytes() -> Option<u64> {
    available_bytes().map(|a| usable(a + recycled_bytes()))
}

/// What may be taken of `available` bytes: an eighth stays for everything else.
fn usable(available: u64) -> u64 {
    available - available / 8
}

fn check_against(bytes: u64, available: Option<u64>) -> Result<(), OutOfMemory> {
    match available {
        Some(a) if bytes > usable(a) => Err(OutOfMemory {
            requested: bytes,
            available: Some(a),
        }),
        _ => Ok(()),
    }
}

/// A vector of `len` elements made by `fill`, or an error if the machine cannot give it: checked
/// against the available memory, then reserved fallibly, before any element is written.
pub fn try_vec<T>(len: usize, fill: impl FnMut() -> T) -> Result<Vec<T>, OutOfMemory> {
    let bytes = (len as u64).saturating_mul(std::mem::size_of::<T>() as u64);
    check(bytes)?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| OutOfMemory {
        requested: bytes,
        available: None,
    })?;
    v.resize_with(len, fill);
    Ok(v)
}

/// `len` zero bytes, or an error if the machine cannot give them: checked against the available
/// memory, then reserved fallibly once to learn whether the allocator grants them, then taken
/// from `vec!`, whose zeroed allocation leaves the pages untouched until they are written. For
/// buffers allocated at every search, where filling them here would cost about 45 ms per 64 MiB.
pub fn try_zeroed_bytes(len: usize) -> Result<Vec<u8>, OutOfMemory> {
    check(len as u64)?;
    let mut trial: Vec<u8> = Vec::new();
    trial.try_reserve_exact(len).map_err(|_| OutOfMemory {
        requested: len as u64,
        available: None,
    })?;
    drop(trial);
    Ok(vec![0; len])
}

/// Types whose all-zero bytes are a value, so that zeroed memory may be read as them.
///
/// # Safety
/// An implementor must accept every zero byte pattern of its size as a valid value.
pub unsafe trait Zeroable {}
// SAFETY: zero is a value of each of these integers and atomics.
unsafe impl Zeroable for u32 {}
// SAFETY: as above.
unsafe impl Zeroable for std::sync::atomic::AtomicU64 {}
// SAFETY: as above.
unsafe impl Zeroable for std::sync::atomic::AtomicU8 {}
// SAFETY: as above.
unsafe impl Zeroable for std::sync::atomic::AtomicU16 {}

/// The mappings of `HugeArray`s dropped while a `Recycling` lives, handed out again, zeroed, to
/// arrays of the same size. Where the machine backs memory lazily (a virtual machine whose host
/// backs a page at its first touch), a fresh page costs far more than a write: a quarter of
/// KQRKBN's DTM count before its first pass went on the kernel's zeroing of fresh pages, and
/// each solve of a build asks for arrays of the sizes the one before it freed.
struct Recycled {
    /// `Recycling`s alive.
    users: usize,
    maps: Vec<memmap2::MmapMut>,
}

static RECYCLED: std::sync::Mutex<Recycled> = std::sync::Mutex::new(Recycled {
    users: 0,
    maps: Vec::new(),
});

fn recycled() -> std::sync::MutexGuard<'static, Recycled> {
    // A panic elsewhere leaves the list whole: each change is one push or remove.
    RECYCLED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// While one lives, dropped `HugeArray`s are kept for reuse; when the last one goes, they are
/// given back.
pub struct Recycling(());

impl Recycling {
    pub fn begin() -> Recycling {
        recycled().users += 1;
        Recycling(())
    }
}

impl Drop for Recycling {
    fn drop(&mut self) {
        let maps = {
            let mut r = recycled();
            r.users -= 1;
            if r.users > 0 {
                return;
            }
            std::mem::take(&mut r.maps)
        };
        drop(maps);
    }
}

/// Gives back every array kept for reuse; the bytes they held.
pub fn release_recycled() -> u64 {
    let maps = std::mem::take(&mut recycled().maps);
    maps.iter().map(|m| m.len() as u64).sum()
}

fn recycled_bytes() -> u64 {
    recycled().maps.iter().map(|m| m.len() as u64).sum()
}

impl Recycled {
    /// The kept mapping of exactly `bytes`, if there is one, no longer kept.
    fn take(&mut self, bytes: usize) -> Option<memmap2::MmapMut> {
        let at = self.maps.iter().position(|m| m.len() == bytes)?;
        Some(self.maps.swap_remove(at))
    }
}

/// A kept mapping of exactly `bytes`, zeroed.
fn take_recycled(bytes: usize) -> Option<memmap2::MmapMut> {
    let mut map = recycled().take(bytes)?;
    zero_written(&mut map);
    Some(map)
}

/// Zeroes `bytes` writing only the pages that hold something, so that pages never touched
/// stay unbacked.
fn zero_written(bytes: &mut [u8]) {
    use rayon::prelude::*;
    const PAGE: usize = 4096;
    static ZEROS: [u8; PAGE] = [0; PAGE];
    bytes
        .par_chunks_mut(PAGE)
        .with_min_len(64)
        .for_each(|page| {
            if page != &ZEROS[..page.len()] {
                page.fill(0);
            }
        });
}

/// A zeroed array for tables of gigabytes read at random (the generator's bitmaps, the
/// verifier's packed values). It is an anonymous mapping that asks the kernel for 2 MiB pages
/// where it gives them on request (Linux's transparent huge pages in `madvise` mode): with
/// 4 KiB pages nearly every read of such a table misses the TLB as well as the caches. Checked
/// against the available memory first, like `try_vec`.
pub struct HugeArray<T: Zeroable> {
    map: Option<memmap2::MmapMut>,
    len: usize,
    /// Mapped from a file (`zeroed_in_file`): not kept for reuse as anonymous memory.
    file_backed: bool,
    _t: std::marker::PhantomData<T>,
}

impl<T: Zeroable> HugeArray<T> {
    pub fn zeroed(len: usize) -> Result<HugeArray<T>, OutOfMemory> {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        let map = if bytes == 0 {
            None
        } else if let Some(map) = take_recycled(bytes) {
            Some(map)
        } else {
            // Fresh memory beside arrays kept for sizes no longer asked for would raise the
            // peak above the solve that freed them.
            release_recycled();
            check(bytes as u64)?;
            let map = memmap2::MmapMut::map_anon(bytes).map_err(|_| OutOfMemory {
                requested: bytes as u64,
                available: None,
            })?;
            // Only a hint: without huge pages the array works the same, slower.
            #[cfg(target_os = "linux")]
            let _ = map.advise(memmap2::Advice::HugePage);
            Some(map)
        };
        Ok(HugeArray {
            map,
            len,
            file_backed: false,
            _t: std::marker::PhantomData,
        })
    }

    /// A zeroed array whose pages are those of a file in `dir`, unlinked as soon as it is
    /// mapped: page cache, which the kernel writes out and takes back under pressure, rather
    /// than anonymous memory that must stay resident. For memos larger than a build's share
    /// of memory. The file is sparse, so only the pages written take disk; it goes with the
    /// array, and with the process if that is killed.
    pub fn zeroed_in_file(len: usize, dir: &std::path::Path) -> std::io::Result<HugeArray<T>> {
        static FILES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        let n = FILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.join(format!(".memo-{}-{n}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        let mapped = (bytes > 0)
            .then(|| {
                file.set_len(bytes as u64)?;
                // SAFETY: the file was created here (`create_new`) and is unlinked below before
                // anything else runs, so no other handle to it is open or can be opened by
                // name: nothing but this mapping changes its bytes, and it never shrinks.
                unsafe { memmap2::MmapMut::map_mut(&file) }
            })
            .transpose();
        std::fs::remove_file(&path)?;
        let map = mapped?;
        Ok(HugeArray {
            map,
            len,
            file_backed: true,
            _t: std::marker::PhantomData,
        })
    }
}

impl<T: Zeroable> std::ops::Deref for HugeArray<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match &self.map {
            // SAFETY: the mapping is page-aligned, so aligned for `T`; it holds `len` elements
            // of `T` (its length was computed from them); the kernel zero-fills anonymous
            // memory, a sparse file reads as zeros where unwritten, and `T: Zeroable` makes
            // zeros a value; it lives as long as `self`, and only `deref_mut` (which borrows
            // `self` mutably) hands out a mutable view.
            Some(map) => unsafe { std::slice::from_raw_parts(map.as_ptr().cast::<T>(), self.len) },
            None => &[],
        }
    }
}

impl<T: Zeroable> std::ops::DerefMut for HugeArray<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.map {
            // SAFETY: as in `deref`, and `&mut self` makes this view the only one.
            Some(map) => unsafe {
                std::slice::from_raw_parts_mut(map.as_mut_ptr().cast::<T>(), self.len)
            },
            None => &mut [],
        }
    }
}

impl<T: Zeroable> Drop for HugeArray<T> {
    fn drop(&mut self) {
        if let Some(map) = self.map.take().filter(|_| !self.file_backed) {
            let mut r = recycled();
            if r.users > 0 {
                r.maps.push(map);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept mapping is taken by its size only, and comes back zeroed.
    #[test]
    fn recycled_mappings_come_back_by_size_zeroed() {
        let map = |bytes: usize, fill: u8| {
            let mut m = memmap2::MmapMut::map_anon(bytes).unwrap();
            m[bytes / 3..].fill(fill);
            m
        };
        let mut kept = Recycled {
            users: 1,
            maps: vec![map(3 << 20, 7), map(5000, 1)],
        };
        assert!(kept.take(4096).is_none());
        let mut m = kept.take(3 << 20).unwrap();
        assert_eq!(m[m.len() - 1], 7);
        zero_written(&mut m);
        assert!(m.iter().all(|&b| b == 0));
        assert_eq!(kept.maps.len(), 1);
        let mut m = kept.take(5000).unwrap();
        zero_written(&mut m);
        assert!(m.iter().all(|&b| b == 0));
        assert!(kept.maps.is_empty());
    }

    /// A file-backed array starts zeroed, keeps what is written, and leaves no file behind.
    #[test]
    fn file_backed_arrays_leave_no_file() {
        let dir = std::env::temp_dir().join(format!("fortress-memo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut a = HugeArray::<u32>::zeroed_in_file(1 << 20, &dir).unwrap();
        assert_eq!(a.len(), 1 << 20);
        assert!(a.iter().all(|&x| x == 0));
        a[12345] = 7;
        assert_eq!(a[12345], 7);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        drop(a);
        let empty = HugeArray::<u32>::zeroed_in_file(0, &dir).unwrap();
        assert!(empty.is_empty());
        assert!(HugeArray::<u32>::zeroed_in_file(4, &dir.join("absent")).is_err());
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn reads_mem_available() {
        let text = "MemTotal:       24683656 kB\nMemFree:  100 kB\nMemAvailable:   24349524 kB\n";
        assert_eq!(mem_available(text), Some(24_349_524 * 1024));
        assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
        assert_eq!(mem_available("MemAvailable: lots kB\n"), None);
    }

    #[test]
    fn cgroup_limit_counts_only_when_set() {
        let s = |t: &str| Some(t.to_string());
        assert_eq!(
            cgroup_room(s("4294967296\n"), s("1073741824\n")),
            Some(3 << 30)
        );
        assert_eq!(cgroup_room(s("max\n"), s("1073741824\n")), None);
        assert_eq!(cgroup_room(None, s("1")), None);
    }

    #[test]
    fn address_space_limit_counts_only_when_set() {
        let s = |t: &str| Some(t.to_string());
        let limits = |soft: &str| {
            s(&format!(
                "Limit                     Soft Limit           Hard Limit           Units\n\
                 Max stack size            8388608              unlimited            bytes\n\
                 Max address space         {soft:<20} unlimited            bytes\n"
            ))
        };
        let status = s("Name:\tengine\nVmPeak:\t  999999 kB\nVmSize:\t  1048576 kB\n");
        assert_eq!(
            address_space_room(limits("34359738368"), status.clone()),
            Some(31 << 30)
        );
        assert_eq!(address_space_room(limits("unlimited"), status), None);
        assert_eq!(address_space_room(limits("34359738368"), None), None);
    }

    #[test]
    fn refuses_what_cannot_be_backed() {
        let gib = 1u64 << 30;
        assert!(check_against(64 * gib, Some(24 * gib)).is_err());
        assert!(check_against(16 << 20, Some(24 * gib)).is_ok());
        // An eighth stays for everything else.
        assert!(check_against(22 * gib, Some(24 * gib)).is_err());
        assert!(check_against(64 * gib, None).is_ok());
        let e = check_against(64 * gib, Some(24 * gib)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "65536 MiB requested, at most 21504 MiB of the 24576 MiB available can be given"
        );
    }

    #[test]
    fn try_vec_refuses_an_impossible_size() {
        assert!(try_vec::<u64>(usize::MAX / 8, || 0).is_err());
        assert_eq!(try_vec(3, || 7u8).unwrap(), vec![7, 7, 7]);
        assert!(try_zeroed_bytes(usize::MAX / 2).is_err());
        assert_eq!(try_zeroed_bytes(5).unwrap(), vec![0; 5]);
    }
}
