//! Arrays kept from one solve for the next. The units of an endgame solved by pawn structure
//! are solved one after another, each in arrays of about the same size: taken fresh from the
//! system, every page of them is faulted in and zeroed again (4.5% of KRPKR's build).

use std::sync::atomic::{AtomicU16, AtomicU8};
use std::sync::Mutex;

/// The arrays of a build's solves: working values (final codes are made from them in place,
/// and given back as values) and un-move counters. A solve gives its arrays back only where
/// it would have let them go, so the pool holds no more than the solves held at once.
#[derive(Default)]
pub struct Pool {
    pub values: Shelf<AtomicU16>,
    pub counts: Shelf<AtomicU8>,
}

/// Arrays of `T` that finished solves gave back.
pub struct Shelf<T>(Mutex<Vec<Vec<T>>>);

impl<T> Default for Shelf<T> {
    fn default() -> Self {
        Shelf(Mutex::new(Vec::new()))
    }
}

impl<T> Shelf<T> {
    /// An array of `n` values `fill()`: the smallest kept that holds `n`, else the largest
    /// kept (grown), else a new one; so a shelf never holds more arrays than were in use at
    /// once, nor any larger than the largest asked for.
    pub fn take(&self, n: usize, fill: impl FnMut() -> T) -> Vec<T> {
        let mut v = {
            let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
            let fit = (0..kept.len())
                .filter(|&i| kept[i].capacity() >= n)
                .min_by_key(|&i| kept[i].capacity());
            let at = fit.or_else(|| (0..kept.len()).max_by_key(|&i| kept[i].capacity()));
            at.map(|i| kept.swap_remove(i)).unwrap_or_default()
        };
        v.clear();
        v.resize_with(n, fill);
        v
    }

    /// Keeps `v` for a later `take`.
    pub fn put(&self, v: Vec<T>) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shelf_gives_back_the_best_fitting_array_filled_afresh() {
        let shelf = Shelf::<u16>::default();
        let mut big = shelf.take(1000, || 7);
        assert_eq!((big.len(), big[999]), (1000, 7));
        big[5] = 9;
        let small = shelf.take(10, || 0);
        let (big_at, small_at) = (big.as_ptr(), small.as_ptr());
        shelf.put(big);
        shelf.put(small);
        // The smallest that holds the length asked for, every value filled again.
        let a = shelf.take(8, || 1);
        assert_eq!((a.as_ptr(), a.len()), (small_at, 8));
        let b = shelf.take(500, || 2);
        assert_eq!(b.as_ptr(), big_at);
        assert!(b.iter().all(|&x| x == 2));
        // None holds 2000 once both are out again: a new one.
        shelf.put(a);
        let c = shelf.take(2000, || 3);
        assert_eq!(c.len(), 2000);
        assert_eq!(
            shelf.0.lock().unwrap().len(),
            0,
            "the largest kept was grown"
        );
    }
}
