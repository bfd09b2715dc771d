//! The cache of decompressed table blocks (Nalimov, Haworth, Heinz 2001, Section 3.6). Each
//! thread keeps its own direct-mapped cache, so a probe takes no lock and threads never wait
//! on one another; a block is named by its file's unique id, half and number, so a file closed
//! and another opened can never be served stale data.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

use crate::egtb::format::BLOCK_SIZE;
use crate::memory::{try_vec, try_zeroed_bytes};

/// Bytes of decompressed blocks each thread may keep (the `NalimovCache` option).
static CACHE_BYTES: AtomicUsize = AtomicUsize::new(64 << 20);
/// Ids of open compressed files; 0 marks an empty slot.
static NEXT_FILE_ID: AtomicU64 = AtomicU64::new(1);

/// Sets the cache size of every thread, in bytes; a thread resizes (and empties) its cache at
/// its next block lookup.
pub fn set_cache_bytes(bytes: usize) {
    CACHE_BYTES.store(bytes.max(BLOCK_SIZE), Relaxed);
}

/// The cache size of every thread, in bytes.
pub fn cache_bytes() -> usize {
    CACHE_BYTES.load(Relaxed)
}

/// A fresh id for a file's blocks.
pub(super) fn new_file_id() -> u64 {
    NEXT_FILE_ID.fetch_add(1, Relaxed)
}

/// The name of one block: file id, half and block number.
#[inline]
pub(super) fn block_key(file_id: u64, half: usize, block: u64) -> u64 {
    debug_assert!(block < 1 << 31 && half < 2);
    (file_id << 32) | ((half as u64) << 31) | block
}

struct Cache {
    /// log2 of the number of slots.
    bits: u32,
    /// The bytes the slots were sized for (resize when the setting changes).
    sized_for: usize,
    keys: Vec<u64>,
    data: Vec<u8>,
}

impl Cache {
    /// Sizes the cache for `bytes` (rounded down to a power of two of blocks), halving while the
    /// machine cannot give it; without room for even one block the cache stays empty and lookups
    /// miss.
    fn resize(&mut self, bytes: usize) {
        self.sized_for = bytes;
        // The old slots go first: their memory counts towards the new ones.
        self.keys = Vec::new();
        self.data = Vec::new();
        self.bits = 0;
        let slots = (bytes / BLOCK_SIZE).max(1);
        let most = usize::BITS - 1 - slots.leading_zeros();
        for bits in (0..=most).rev() {
            let Ok(keys) = try_vec(1 << bits, || 0) else {
                continue;
            };
            let Ok(data) = try_zeroed_bytes(BLOCK_SIZE << bits) else {
                continue;
            };
            self.bits = bits;
            self.keys = keys;
            self.data = data;
            return;
        }
    }
}

thread_local! {
    static CACHE: RefCell<Cache> = const { RefCell::new(Cache {
        bits: 0,
        sized_for: 0,
        keys: Vec::new(),
        data: Vec::new(),
    }) };
}

/// Reads from the block named `key`: from the cache if it is there, else after `fill` has
/// decompressed it into a slot. None if `fill` fails (the slot is then left empty).
#[inline]
pub(super) fn with_block<R>(
    key: u64,
    fill: impl FnOnce(&mut [u8]) -> bool,
    read: impl FnOnce(&[u8]) -> R,
) -> Option<R> {
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        let want = CACHE_BYTES.load(Relaxed);
        if c.sized_for != want {
            c.resize(want); // once per thread and setting: not on the probe path
        }
        if c.keys.is_empty() {
            return None;
        }
        let slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - c.bits.max(1))) as usize
            & ((1 << c.bits) - 1);
        let Cache { keys, data, .. } = &mut *c;
        let block = &mut data[slot * BLOCK_SIZE..(slot + 1) * BLOCK_SIZE];
        if keys[slot] != key {
            keys[slot] = 0;
            if !fill(block) {
                return None;
            }
            keys[slot] = key;
        }
        Some(read(block))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_filled_once_and_never_confused() {
        let a = new_file_id();
        let b = new_file_id();
        let mut fills = 0;
        for round in 0..3 {
            for (id, byte) in [(a, 7u8), (b, 9u8)] {
                let got = with_block(
                    block_key(id, 1, 5),
                    |buf| {
                        fills += 1;
                        buf.fill(byte);
                        true
                    },
                    |buf| buf[100],
                );
                assert_eq!(got, Some(byte), "round {round}");
            }
        }
        // Two keys may share a slot of a direct-mapped cache, so 2 to 6 fills; never more.
        assert!((2..=6).contains(&fills), "{fills} fills");
        assert_eq!(
            with_block(block_key(a, 0, 1), |_| false, |buf| buf[0]),
            None,
            "a failed fill is not cached"
        );
    }
}
