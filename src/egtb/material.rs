//! Material signatures of endgames (`KQRKP`): parsing, naming, the canonical colouring that
//! decides which side is stored as White (Nalimov, Haworth, Heinz 2001, Section 3 and its tables),
//! the list of all endgames, and the sub-endgames one capture or promotion away.

use crate::chess::{Color, PieceType};
use std::fmt;

/// Non-king piece types in the order endgame names list them: Q R B N P.
pub const NAME_ORDER: [PieceType; 5] = [
    PieceType::Queen,
    PieceType::Rook,
    PieceType::Bishop,
    PieceType::Knight,
    PieceType::Pawn,
];

/// The men on the board, by colour and non-king type (index `PieceType::index()`, Pawn..Queen).
/// Each side also has its king, which is not counted here.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Material {
    counts: [[u8; 5]; 2],
}

#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum MaterialError {
    /// The name does not have the form K<men>K<men> with men among Q R B N P.
    #[error("'{0}' is not an endgame name (expected e.g. KQKR: K, White's men, K, Black's men)")]
    BadName(String),
    /// More men than the index can describe (at most 7 on the board).
    #[error("'{0}' has more than 7 men")]
    TooManyMen(String),
}

impl Material {
    /// Parses a name like `KQRKP` (case-insensitive). The result is not canonicalised.
    pub fn parse(name: &str) -> Result<Material, MaterialError> {
        let bad = || MaterialError::BadName(name.to_string());
        let upper = name.trim().to_ascii_uppercase();
        let mut parts = upper.split('K');
        // "KQKR".split('K') gives ["", "Q", "R"].
        if parts.next() != Some("") {
            return Err(bad());
        }
        let (white, black) = match (parts.next(), parts.next(), parts.next()) {
            (Some(w), Some(b), None) => (w, b),
            _ => return Err(bad()),
        };
        let mut m = Material::default();
        for (color, men) in [(Color::White, white), (Color::Black, black)] {
            for c in men.chars() {
                let kind = PieceType::from_letter(c).ok_or_else(bad)?;
                if kind == PieceType::King {
                    return Err(bad());
                }
                m.counts[color.index()][kind.index()] += 1;
            }
        }
        if m.men() > 7 {
            return Err(MaterialError::TooManyMen(name.to_string()));
        }
        Ok(m)
    }

    /// Builds a material from per-colour counts indexed by `PieceType::index()` (Pawn..Queen).
    pub fn from_counts(white: [u8; 5], black: [u8; 5]) -> Material {
        Material {
            counts: [white, black],
        }
    }

    #[inline]
    pub fn count(&self, color: Color, kind: PieceType) -> u8 {
        if kind == PieceType::King {
            1
        } else {
            self.counts[color.index()][kind.index()]
        }
    }

    /// Non-king men of one side.
    pub fn side_men(&self, color: Color) -> u8 {
        self.counts[color.index()].iter().sum()
    }

    /// All men on the board, kings included.
    pub fn men(&self) -> u8 {
        2 + self.side_men(Color::White) + self.side_men(Color::Black)
    }

    pub fn has_pawns(&self) -> bool {
        self.count(Color::White, PieceType::Pawn) + self.count(Color::Black, PieceType::Pawn) > 0
    }

    /// Both sides have a pawn, so some positions may allow an en-passant capture.
    pub fn has_en_passant(&self) -> bool {
        self.count(Color::White, PieceType::Pawn) > 0
            && self.count(Color::Black, PieceType::Pawn) > 0
    }

    /// The material after a man of `color` and `kind` (not a king, and present) is taken off.
    pub fn without(&self, color: Color, kind: PieceType) -> Material {
        let mut m = *self;
        let n = &mut m.counts[color.index()][kind.index()];
        debug_assert!(*n > 0 && kind != PieceType::King);
        *n -= 1;
        m
    }

    /// The same men with the colours exchanged (`KRKQ` for `KQKR`).
    pub fn flipped(&self) -> Material {
        Material {
            counts: [self.counts[1], self.counts[0]],
        }
    }

    /// Both sides have the same men (`KQKQ`, `KPKP`): one half is the other with colours flipped.
    pub fn is_symmetric(&self) -> bool {
        self.counts[0] == self.counts[1]
    }

    /// Letters of one side's men in name order (Q R B N P), as sort keys 0..4.
    fn side_key(&self, color: Color) -> (u8, [u8; 7]) {
        let mut key = [u8::MAX; 7];
        let mut n = 0;
        for (rank, kind) in NAME_ORDER.iter().enumerate() {
            for _ in 0..self.count(color, *kind) {
                key[n] = rank as u8;
                n += 1;
            }
        }
        (n as u8, key)
    }

    /// The stored colouring: the side with more men is White; with equal numbers, the side whose
    /// men come first in the order Q R B N P (KBKN, KQKR, KRKP).
    pub fn is_canonical(&self) -> bool {
        let (nw, kw) = self.side_key(Color::White);
        let (nb, kb) = self.side_key(Color::Black);
        nw > nb || (nw == nb && kw <= kb)
    }

    /// The canonical material and whether the colours had to be flipped to reach it.
    pub fn canonical(&self) -> (Material, bool) {
        if self.is_canonical() {
            (*self, false)
        } else {
            (self.flipped(), true)
        }
    }

    /// Every canonical endgame with 2 to `max_men` men (both kings included), sorted by name.
    /// For 5 men that is KK plus the 145 endgames of the paper's Tables 9-13.
    pub fn all_up_to(max_men: u8) -> Vec<Material> {
        fn side_sets(n: u8) -> Vec<[u8; 5]> {
            // All multisets of n men over the 5 non-king types.
            let mut out = Vec::new();
            let mut c = [0u8; 5];
            fn rec(t: usize, left: u8, c: &mut [u8; 5], out: &mut Vec<[u8; 5]>) {
                if t == 4 {
                    c[4] = left;
                    out.push(*c);
                    return;
                }
                for k in 0..=left {
                    c[t] = k;
                    rec(t + 1, left - k, c, out);
                }
            }
            rec(0, n, &mut c, &mut out);
            out
        }
        let mut all = Vec::new();
        for extra in 0..=max_men.saturating_sub(2) {
            for nw in 0..=extra {
                let nb = extra - nw;
                for w in side_sets(nw) {
                    for b in side_sets(nb) {
                        let m = Material::from_counts(w, b);
                        if m.is_canonical() {
                            all.push(m);
                        }
                    }
                }
            }
        }
        all.sort_by_key(|m| m.to_string());
        all.dedup();
        all
    }

    /// The canonical endgames one move away by a capture, a promotion, or a capture that
    /// promotes: the tables the generator must have before it can build this one.
    pub fn sub_endgames(&self) -> Vec<Material> {
        let mut out = Vec::new();
        let mut push = |m: Material| {
            let (c, _) = m.canonical();
            if !out.contains(&c) {
                out.push(c);
            }
        };
        for mover in Color::BOTH {
            let victim_side = (!mover).index();
            // Captures (by any man of `mover`) of each kind of enemy man.
            let mut captures: Vec<Option<usize>> = vec![None];
            for t in 0..5 {
                if self.counts[victim_side][t] > 0 {
                    let mut m = *self;
                    m.counts[victim_side][t] -= 1;
                    push(m);
                    captures.push(Some(t));
                }
            }
            // Promotions, with or without a capture.
            if self.counts[mover.index()][PieceType::Pawn.index()] > 0 {
                for cap in &captures {
                    for promo in PieceType::PROMOTIONS {
                        let mut m = *self;
                        if let Some(t) = cap {
                            m.counts[victim_side][*t] -= 1;
                        }
                        m.counts[mover.index()][PieceType::Pawn.index()] -= 1;
                        m.counts[mover.index()][promo.index()] += 1;
                        push(m);
                    }
                }
            }
        }
        out.sort_by_key(|m| m.to_string());
        out
    }
}

impl fmt::Display for Material {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        for color in Color::BOTH {
            write!(f, "K")?;
            for kind in NAME_ORDER {
                for _ in 0..self.count(color, kind) {
                    write!(f, "{}", kind.letter())?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_name_round_trip() {
        for name in ["KK", "KQK", "KQRKP", "KPPKQ", "KBNNK", "KRKQ"] {
            assert_eq!(Material::parse(name).unwrap().to_string(), name);
        }
        assert_eq!(Material::parse("kqkr").unwrap().to_string(), "KQKR");
        // Men are listed in name order whatever order they are typed in.
        assert_eq!(Material::parse("KPRQK").unwrap().to_string(), "KQRPK");
        for bad in ["", "QK", "KQ", "KXK", "KQKRK", "KKK", "K QK"] {
            assert!(Material::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn canonical_colouring() {
        let canon = |s: &str| Material::parse(s).unwrap().canonical();
        assert_eq!(canon("KRKQ").0.to_string(), "KQKR");
        assert!(canon("KRKQ").1);
        assert_eq!(canon("KNKB").0.to_string(), "KBKN");
        assert_eq!(canon("KPKR").0.to_string(), "KRKP");
        assert_eq!(canon("KQKPP").0.to_string(), "KPPKQ");
        assert!(!canon("KPPKQ").1);
        assert!(!canon("KQKQ").1);
        assert!(Material::parse("KQKQ").unwrap().is_symmetric());
    }

    #[test]
    fn counts_of_endgames() {
        let all = Material::all_up_to(5);
        assert_eq!(all.len(), 146); // KK + 145
        let by_men = |n| all.iter().filter(|m| m.men() == n).count();
        assert_eq!(
            (by_men(2), by_men(3), by_men(4), by_men(5)),
            (1, 5, 30, 110)
        );
        assert!(all.iter().all(|m| m.is_canonical()));
    }

    #[test]
    fn sub_endgames_of_kpkp_and_kqrkp() {
        let names = |s: &str| -> Vec<String> {
            Material::parse(s)
                .unwrap()
                .sub_endgames()
                .iter()
                .map(|m| m.to_string())
                .collect()
        };
        // KPKP: captures give KPK; promotions give KQKP, ...; capture-promotions give KQK, ...
        let kpkp = names("KPKP");
        for want in [
            "KPK", "KQKP", "KRKP", "KBKP", "KNKP", "KQK", "KRK", "KBK", "KNK",
        ] {
            assert!(
                kpkp.contains(&want.to_string()),
                "{want} missing from {kpkp:?}"
            );
        }
        assert_eq!(kpkp.len(), 9);
        let kqrkp = names("KQRKP");
        assert!(kqrkp.contains(&"KQRK".to_string()));
        assert!(kqrkp.contains(&"KQKP".to_string()));
        assert!(kqrkp.contains(&"KQRKQ".to_string())); // the pawn promotes
        assert!(!kqrkp.contains(&"KRKQ".to_string())); // always canonical
        assert!(kqrkp.contains(&"KQKQ".to_string())); // promotes capturing the rook
    }
}
