//! The checksum that Syzygy's generator embeds in every file it writes (its `tbcheck` checks
//! it): the file's size is a multiple of 64 plus 16, the last 16 bytes being the checksum of the
//! rest. The rest is cut into chunks of 16 MiB, each hashed by CityHashCrc256 (Google's
//! CityHash, the variant that mixes in CRC-32C); the 32-byte hashes of the chunks, one after
//! the other, are hashed by CityHashCrc128, whose two 64-bit halves are the checksum. The
//! prober follows the offsets in a file without checking them, so a file is checked before it
//! is handed over.
//!
//! CityHashCrc128 is CityHash128 (version 1.0.3, from the `cityhash-rs` crate) up to 900
//! bytes and two words of CityHashCrc256 beyond; no crate carries CityHashCrc256, so it is
//! written here. Both are checked against the checksums `rtbgen` embedded (tests below and
//! `tests/syzygy_damage.rs`).

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const CHUNK: usize = 1 << 24;

/// Why a file is not a sound Syzygy file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Damage {
    /// Its size is not a multiple of 64 plus 16: no checksum, or a truncated file.
    NoChecksum(u64),
    /// The checksum of its contents is not the one it carries.
    Mismatch,
    /// It could not be read.
    Unreadable(String),
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Damage::NoChecksum(size) => write!(
                f,
                "{size} bytes, not a multiple of 64 plus the 16 of Syzygy's checksum (truncated?)"
            ),
            Damage::Mismatch => write!(f, "its contents do not match its checksum (damaged)"),
            Damage::Unreadable(e) => write!(f, "cannot be read: {e}"),
        }
    }
}

/// The checksum `path` carries, if its size leaves room for one.
fn embedded(path: &Path) -> Result<[u8; 16], Damage> {
    let unreadable = |e: io::Error| Damage::Unreadable(e.to_string());
    let mut f = File::open(path).map_err(unreadable)?;
    let size = f.metadata().map_err(unreadable)?.len();
    if size % 64 != 16 {
        return Err(Damage::NoChecksum(size));
    }
    let mut sum = [0; 16];
    f.seek(SeekFrom::Start(size - 16)).map_err(unreadable)?;
    f.read_exact(&mut sum).map_err(unreadable)?;
    Ok(sum)
}

/// Checks `path` against the checksum it carries; returns that checksum when they agree. Reads
/// the file once, a chunk at a time.
fn verify(path: &Path) -> Result<[u8; 16], Damage> {
    let sum = embedded(path)?;
    let unreadable = |e: io::Error| Damage::Unreadable(e.to_string());
    let mut f = File::open(path).map_err(unreadable)?;
    let mut body = f.metadata().map_err(unreadable)?.len() - 16;
    let mut chunk = vec![0u8; CHUNK.min(body as usize)];
    let mut hashes = Vec::new();
    while body > 0 {
        let n = CHUNK.min(body as usize);
        f.read_exact(&mut chunk[..n]).map_err(unreadable)?;
        hashes.extend(crc256(&chunk[..n]).iter().flat_map(|w| w.to_le_bytes()));
        body -= n as u64;
    }
    (crc128(&hashes) == sum)
        .then_some(sum)
        .ok_or(Damage::Mismatch)
}

/// Files at least this large are remembered on disk once checked: checking them costs seconds
/// each, and a set of them minutes. Smaller ones are checked again each time a path is set.
const REMEMBERED_BYTES: u64 = 64 << 20;

/// What identifies a file's contents cheaply: its path, size, modification time and the
/// checksum it carries. A file written anew changes its time, so a check found under the same
/// key was a check of these contents.
fn key(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let time = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    let sum = embedded(path).ok()?;
    let hex: String = sum.iter().map(|b| format!("{b:02x}")).collect();
    let path = std::path::absolute(path).ok()?;
    Some(format!(
        "{} {} {hex} {}",
        meta.len(),
        time.as_nanos(),
        path.display()
    ))
}

/// The large files found sound, by `key`: this process's and those the memo file remembers.
static SOUND: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Where large files found sound are remembered: a line per file, its `key`.
fn memo_file() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("fortress").join("syzygy-checked.txt"))
}

/// `verify`, where a file found sound before (in this process, or on disk for large files)
/// is not read again.
pub fn verify_remembered(path: &Path) -> Result<(), Damage> {
    let large = std::fs::metadata(path).is_ok_and(|m| m.len() >= REMEMBERED_BYTES);
    let Some(key) = key(path).filter(|_| large) else {
        return verify(path).map(|_| ());
    };
    let mut sound = SOUND.lock().unwrap_or_else(|p| p.into_inner());
    if sound.is_empty() {
        if let Some(text) = memo_file().and_then(|f| std::fs::read_to_string(f).ok()) {
            sound.extend(text.lines().map(str::to_string));
        }
    }
    if sound.contains(&key) {
        return Ok(());
    }
    verify(path)?;
    // Best effort: a memo that cannot be written costs a check next time, nothing else.
    if let Some(f) = memo_file() {
        let _ = std::fs::create_dir_all(f.parent().expect("a folder"));
        if let Ok(mut out) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&f)
        {
            let _ = writeln!(out, "{key}");
        }
    }
    sound.insert(key);
    Ok(())
}

/// CityHashCrc128 of `s`, as its two words in little-endian order.
fn crc128(s: &[u8]) -> [u8; 16] {
    let (first, second) = if s.len() <= 900 {
        let h = cityhash_rs::cityhash_103_128(s);
        ((h >> 64) as u64, h as u64)
    } else {
        let r = crc256(s);
        (r[2], r[3])
    };
    let mut out = [0; 16];
    out[..8].copy_from_slice(&first.to_le_bytes());
    out[8..].copy_from_slice(&second.to_le_bytes());
    out
}

const K0: u64 = 0xc3a5_c85c_97cb_3127;

fn fetch(s: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(s[at..at + 8].try_into().expect("eight bytes"))
}

fn shift_mix(v: u64) -> u64 {
    v ^ (v >> 47)
}

/// CityHash's mix of two words into one (its `Hash128to64`).
fn hash16(u: u64, v: u64) -> u64 {
    const MUL: u64 = 0x9ddf_ea08_eb38_2d69;
    let a = shift_mix((u ^ v).wrapping_mul(MUL));
    shift_mix((v ^ a).wrapping_mul(MUL)).wrapping_mul(MUL)
}

/// One step of CRC-32C over the eight bytes of `v`, without the inversions before and after
/// (the SSE 4.2 instruction `crc32`).
#[cfg(all(target_arch = "x86_64", target_feature = "sse4.2"))]
fn crc32c(crc: u64, v: u64) -> u64 {
    // SAFETY: the intrinsic needs SSE 4.2 and nothing else; this function is compiled only
    // where the build enables SSE 4.2 for the whole program (x86-64-v2, `.cargo/config.toml`).
    unsafe { std::arch::x86_64::_mm_crc32_u64(crc, v) }
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse4.2")))]
fn crc32c(crc: u64, v: u64) -> u64 {
    static TABLE: [u32; 256] = {
        let mut t = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 == 1 {
                    (c >> 1) ^ 0x82f6_3b78
                } else {
                    c >> 1
                };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    };
    let mut c = crc as u32;
    for b in v.to_le_bytes() {
        c = (c >> 8) ^ TABLE[((c ^ b as u32) & 0xff) as usize];
    }
    c as u64
}

/// CityHashCrc256: inputs under 240 bytes are padded with zeros to 240, the length going into
/// the seed.
fn crc256(s: &[u8]) -> [u64; 4] {
    if s.len() >= 240 {
        crc256_long(s, 0)
    } else {
        let mut padded = [0u8; 240];
        padded[..s.len()].copy_from_slice(s);
        crc256_long(&padded, !(s.len() as u32))
    }
}

/// The state of CityHashCrc256: five words mixed by multiplication and rotation, five CRCs.
struct State {
    mix: [u64; 5],
    t: u64,
    crc: [u64; 5],
}

impl State {
    /// Takes in the 40 bytes of `s` at `at`.
    fn step(&mut self, s: &[u8], at: usize, multiplier: u64, z: u32) {
        let [a, b, c, d, e] = self.mix;
        let rotations = [(b, 41), (c, 27), (d, 41), (e, 33), (self.t, 25)];
        self.t = a;
        for (k, (word, r)) in rotations.into_iter().enumerate() {
            self.mix[k] = word
                .rotate_right(r ^ z)
                .wrapping_mul(multiplier)
                .wrapping_add(fetch(s, at + 8 * k));
            self.crc[k] = crc32c(self.crc[k], self.mix[k]);
        }
    }
}

fn crc256_long(s: &[u8], seed: u32) -> [u64; 4] {
    let len = s.len() as u64;
    let c = hash16(fetch(s, 96).wrapping_add(K0), len);
    let d = fetch(s, 120).wrapping_mul(K0).wrapping_add(len);
    let mut st = State {
        mix: [
            fetch(s, 56).wrapping_add(K0),
            fetch(s, 96).wrapping_add(K0),
            c,
            d,
            fetch(s, 184).wrapping_add(seed as u64),
        ],
        t: c.wrapping_add(d),
        crc: [seed as u64, 0, 0, 0, 0],
    };
    let (r0, r1) = (c, d);
    let rounds = s.len() / 240;
    for round in 0..rounds {
        for k in 0..6 {
            let (multiplier, z) = if k % 2 == 0 { (1, 1) } else { (K0, 0) };
            st.step(s, round * 240 + k * 40, multiplier, z);
        }
    }
    let mut at = rounds * 240;
    while s.len() - at >= 40 {
        st.step(s, at, K0, 0);
        at += 40;
    }
    if at < s.len() {
        // The last bytes, in the 40 that end the input.
        st.step(s, s.len() - 40, K0, 0);
    }
    let [mut a, mut b, mut c, mut d, mut e] = st.mix;
    let [mut f, mut g, mut h, mut i, mut j] = st.crc;
    j = j.wrapping_add(i << 32);
    a = hash16(a, j);
    h = h.wrapping_add(g << 32);
    b = b.wrapping_add(h);
    c = hash16(c, f).wrapping_add(i);
    d = hash16(d, e.wrapping_add(r0));
    j = j.wrapping_add(e);
    i = i.wrapping_add(hash16(h, st.t));
    e = hash16(a, d).wrapping_add(j);
    f = hash16(b, c).wrapping_add(a);
    g = hash16(j, i).wrapping_add(c);
    let w0 = e.wrapping_add(f).wrapping_add(g).wrapping_add(h);
    let mix = |x: u64| shift_mix(x.wrapping_mul(K0)).wrapping_mul(K0);
    a = mix(a.wrapping_add(g)).wrapping_add(b);
    let w1 = r1.wrapping_add(a.wrapping_add(w0));
    a = mix(a).wrapping_add(c);
    let w2 = a.wrapping_add(w1);
    a = mix(a.wrapping_add(e));
    [w0, w1, w2, a.wrapping_add(w2)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CRC-32C bit by bit as it is defined (reflected polynomial 0x82f63b78), no inversions.
    fn crc32c_by_bits(mut crc: u32, bytes: &[u8]) -> u32 {
        for &b in bytes {
            crc ^= b as u32;
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0x82f6_3b78
                } else {
                    crc >> 1
                };
            }
        }
        crc
    }

    #[test]
    fn the_crc_step_is_crc32c() {
        // The standard's check value: CRC-32C of "123456789" is 0xe3069283.
        assert_eq!(!crc32c_by_bits(!0, b"123456789"), 0xe306_9283);
        let mut rng = fastrand::Rng::with_seed(3);
        for _ in 0..1000 {
            let (crc, v) = (rng.u32(..), rng.u64(..));
            assert_eq!(
                crc32c(crc as u64, v),
                crc32c_by_bits(crc, &v.to_le_bytes()) as u64
            );
        }
    }
}
