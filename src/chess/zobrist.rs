//! Zobrist keys, made at compile time by a fixed SplitMix64 sequence so that hash keys (and so
//! `engine bench`'s node count) are the same on every build.

const fn splitmix(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (s, z ^ (z >> 31))
}

pub struct Keys {
    /// By `Piece::index()` (0..12) and square.
    pub pieces: [[u64; 64]; 12],
    /// By the 4-bit castling-rights set.
    pub castling: [u64; 16],
    /// By the file of the en-passant target square.
    pub ep_file: [u64; 8],
    pub black_to_move: u64,
}

const fn make_keys() -> Keys {
    let mut state = 0x0F0E_7E55_u64;
    let mut keys = Keys {
        pieces: [[0; 64]; 12],
        castling: [0; 16],
        ep_file: [0; 8],
        black_to_move: 0,
    };
    let mut p = 0;
    while p < 12 {
        let mut sq = 0;
        while sq < 64 {
            let (s, k) = splitmix(state);
            state = s;
            keys.pieces[p][sq] = k;
            sq += 1;
        }
        p += 1;
    }
    // Castling keys are the xor of one key per right, so updating rights is one xor of the difference.
    let mut right_keys = [0u64; 4];
    let mut i = 0;
    while i < 4 {
        let (s, k) = splitmix(state);
        state = s;
        right_keys[i] = k;
        i += 1;
    }
    let mut set = 0;
    while set < 16 {
        let mut k = 0;
        let mut bit = 0;
        while bit < 4 {
            if set >> bit & 1 != 0 {
                k ^= right_keys[bit];
            }
            bit += 1;
        }
        keys.castling[set] = k;
        set += 1;
    }
    let mut f = 0;
    while f < 8 {
        let (s, k) = splitmix(state);
        state = s;
        keys.ep_file[f] = k;
        f += 1;
    }
    let (_, k) = splitmix(state);
    keys.black_to_move = k;
    keys
}

pub static KEYS: Keys = make_keys();
