//! The transposition table, shared by all search threads without locks.
//!
//! Each entry is two atomic words: the data, and the key xor the data. A reader accepts an entry
//! only when the xor gives back its own key, so a torn write by another thread reads as a miss,
//! never as another position's data (Hyatt and Mann's lockless hashing).

use super::value::{from_tt, to_tt, Value};
use crate::chess::Move;
use crate::memory::{try_vec, OutOfMemory};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Bound {
    /// The true value is at least this (a fail-high).
    Lower = 1,
    /// The true value is at most this (a fail-low).
    Upper = 2,
    Exact = 3,
}

#[derive(Copy, Clone, Debug)]
pub struct Entry {
    pub mv: Move,
    pub value: Value,
    pub eval: Value,
    pub depth: i32,
    pub bound: Bound,
}

struct Slot {
    check: AtomicU64,
    data: AtomicU64,
}

pub struct TranspositionTable {
    slots: Vec<Slot>,
    generation: AtomicU8,
}

const SLOT_BYTES: usize = 16;

// data layout: move 16 | value 16 | eval 16 | depth 8 | bound 2 | generation 6
fn pack(mv: Move, value: Value, eval: Value, depth: i32, bound: Bound, generation: u8) -> u64 {
    mv.0 as u64
        | ((value as i16 as u16 as u64) << 16)
        | ((eval as i16 as u16 as u64) << 32)
        | ((depth.clamp(-1, 254) as i8 as u8 as u64) << 48)
        | ((bound as u64) << 56)
        | (((generation & 63) as u64) << 58)
}

impl TranspositionTable {
    /// A table of `megabytes` (at least 1024 entries), or an error if the machine cannot give it.
    pub fn new(megabytes: usize) -> Result<TranspositionTable, OutOfMemory> {
        let count = (megabytes.max(1).saturating_mul(1 << 20) / SLOT_BYTES).max(1024);
        let slots = try_vec(count, || Slot {
            check: AtomicU64::new(0),
            data: AtomicU64::new(0),
        })?;
        Ok(TranspositionTable {
            slots,
            generation: AtomicU8::new(0),
        })
    }

    pub fn megabytes(&self) -> usize {
        (self.slots.len() * SLOT_BYTES) >> 20
    }

    pub fn clear(&self) {
        for s in &self.slots {
            s.check.store(0, Ordering::Relaxed);
            s.data.store(0, Ordering::Relaxed);
        }
        self.generation.store(0, Ordering::Relaxed);
    }

    /// Called once per `go`: entries of older searches become cheaper to replace.
    pub fn new_search(&self) {
        self.generation.fetch_add(1, Ordering::Relaxed);
    }

    #[inline(always)]
    fn slot(&self, key: u64) -> &Slot {
        // Multiply-shift maps the key onto any table length without a modulo.
        let i = ((key as u128 * self.slots.len() as u128) >> 64) as usize;
        &self.slots[i]
    }

    pub fn probe(&self, key: u64, ply: usize) -> Option<Entry> {
        let s = self.slot(key);
        let data = s.data.load(Ordering::Relaxed);
        if s.check.load(Ordering::Relaxed) ^ data != key || data == 0 {
            return None;
        }
        let bound = match (data >> 56) & 3 {
            1 => Bound::Lower,
            2 => Bound::Upper,
            3 => Bound::Exact,
            _ => return None,
        };
        Some(Entry {
            mv: Move(data as u16),
            value: from_tt((data >> 16) as u16 as i16 as Value, ply),
            eval: (data >> 32) as u16 as i16 as Value,
            depth: (data >> 48) as u8 as i8 as i32,
            bound,
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &self,
        key: u64,
        mv: Move,
        value: Value,
        eval: Value,
        depth: i32,
        bound: Bound,
        ply: usize,
    ) {
        let s = self.slot(key);
        let generation = self.generation.load(Ordering::Relaxed) & 63;
        let old = s.data.load(Ordering::Relaxed);
        let old_key = s.check.load(Ordering::Relaxed) ^ old;
        let same = old_key == key;
        let old_depth = (old >> 48) as u8 as i8 as i32;
        let old_generation = ((old >> 58) & 63) as u8;
        // Keep a deeper entry of the current search for another position; otherwise replace.
        if !same
            && old != 0
            && old_generation == generation
            && old_depth > depth + 2
            && bound != Bound::Exact
        {
            return;
        }
        // Keep the old best move when this store has none for the same position.
        let mv = if mv.is_none() && same {
            Move(old as u16)
        } else {
            mv
        };
        let data = pack(mv, to_tt(value, ply), eval, depth, bound, generation);
        s.data.store(data, Ordering::Relaxed);
        s.check.store(key ^ data, Ordering::Relaxed);
    }

    /// Permille of a sample of entries written by the current search, for UCI `hashfull`.
    pub fn hashfull(&self) -> u32 {
        let generation = self.generation.load(Ordering::Relaxed) & 63;
        let sample = self.slots.len().min(1000);
        let used = self.slots[..sample]
            .iter()
            .filter(|s| {
                let d = s.data.load(Ordering::Relaxed);
                d != 0 && ((d >> 58) & 63) as u8 == generation
            })
            .count();
        (used * 1000 / sample) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::Square;

    #[test]
    fn stores_and_finds_with_mate_adjustment() {
        let tt = TranspositionTable::new(1).unwrap();
        let m = Move::normal(Square(12), Square(28));
        tt.store(
            0xDEAD_BEEF,
            m,
            super::super::value::MATE - 10,
            25,
            7,
            Bound::Exact,
            4,
        );
        let e = tt.probe(0xDEAD_BEEF, 6).unwrap();
        assert_eq!(e.mv, m);
        // Mate in 10 plies from a node at ply 4 is mate in 12 plies from a node reached at ply 6.
        assert_eq!(e.value, super::super::value::MATE - 12);
        assert_eq!(e.eval, 25);
        assert_eq!(e.depth, 7);
        assert_eq!(e.bound, Bound::Exact);
        assert!(tt.probe(0xDEAD_BEEF ^ 1, 0).is_none());
    }

    #[test]
    fn a_size_beyond_the_machine_is_refused() {
        // 2^40 MB: more than any machine has, and more than the allocator can reserve.
        assert!(TranspositionTable::new(1 << 40).is_err());
        assert_eq!(TranspositionTable::new(2).unwrap().megabytes(), 2);
    }
}
