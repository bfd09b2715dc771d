//! Binomial coefficients and the colex ranking of k-subsets they define (the combinatorial
//! number system): a group of like men is numbered by the colex rank of its men's numbers
//! (Nalimov et al. 2001, Section 3.3; notes, rule D). Shared with the generator's layout.

/// C(n, k) for n <= 64, k <= 7.
static BINOM: [[u64; 8]; 65] = {
    let mut b = [[0u64; 8]; 65];
    let mut n = 0;
    while n < 65 {
        b[n][0] = 1;
        let mut k = 1;
        while k < 8 {
            if n > 0 {
                b[n][k] = b[n - 1][k - 1] + b[n - 1][k];
            }
            k += 1;
        }
        n += 1;
    }
    b
};

/// Colex unranking of pairs below 64 by table: entry r holds (c0, c1), packed c0 | c1 << 8.
static PAIRS: [u16; 2016] = {
    let mut t = [0u16; 2016];
    let mut c1 = 1;
    while c1 < 64 {
        let mut c0 = 0;
        while c0 < c1 {
            t[c0 + c1 * (c1 - 1) / 2] = (c0 | (c1 << 8)) as u16;
            c0 += 1;
        }
        c1 += 1;
    }
    t
};

#[inline(always)]
pub(crate) fn binom(n: u32, k: u32) -> u64 {
    BINOM[n as usize][k as usize]
}

/// Colex rank of sorted distinct numbers c[0] < c[1] < ...: sum of C(c[i], i + 1) (notes, rule D).
#[inline(always)]
pub(crate) fn colex_rank(c: &[u8]) -> u64 {
    let mut r = 0;
    for (i, &x) in c.iter().enumerate() {
        r += binom(x as u32, i as u32 + 1);
    }
    r
}

/// Inverse of `colex_rank` for k numbers below 64.
#[inline(always)]
pub(crate) fn colex_unrank(mut r: u64, k: usize, out: &mut [u8; 8]) {
    if k == 2 {
        let p = PAIRS[r as usize];
        out[0] = p as u8;
        out[1] = (p >> 8) as u8;
        return;
    }
    for i in (1..=k).rev() {
        // Largest c with C(c, i) <= r; c >= i - 1 since C(i - 1, i) = 0.
        let (mut lo, mut hi) = (i as u32 - 1, 63u32);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if binom(mid, i as u32) <= r {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        out[i - 1] = lo as u8;
        r -= binom(lo, i as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colex_round_trip() {
        let mut out = [0u8; 8];
        for k in 1..=3usize {
            let total = binom(20, k as u32);
            for r in 0..total {
                colex_unrank(r, k, &mut out);
                assert!(out[..k].windows(2).all(|w| w[0] < w[1]));
                assert!(out[k - 1] < 20);
                assert_eq!(colex_rank(&out[..k]), r);
            }
        }
    }
}
