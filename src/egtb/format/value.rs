//! The values a file holds: the metric, the five results, and one entry's value (a win or loss
//! in so many moves or plies, a draw, a broken entry) in the 16-bit code every pass, file and
//! probe shares.

use std::fmt;

/// The value encoding of `TbValue` (0 broken, 1 draw, 2n win in n, 2n + 3 loss in n).
pub const ENCODING_WDL_DEPTH: u8 = 1;
/// The value encoding of a WDL file: `Wdl5::code` (1 loss to 5 win, 0 broken).
pub const ENCODING_WDL5: u8 = 2;
/// The value encoding of a distance file whose results are the endgame's WDL file's: each
/// entry holds its depth n alone (win or loss in n), a draw the depth before it. Wins, draws
/// and losses interleaved cost the coder nothing then (`from_depth` decodes).
pub const ENCODING_DEPTH: u8 = 3;
/// The value encoding of a WDL file of format 2 as `gentb` writes it: `Wdl5::code` packed three
/// to a byte, base 5 (`Packing::Base5`).
pub const ENCODING_WDL5_PACKED: u8 = 4;

/// The depth metric a file holds.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum Metric {
    /// Distance to mate, in winner's moves.
    Dtm = 1,
    /// Distance to zeroing (capture or pawn move) under optimal play to mate.
    Dtz = 2,
    /// Distance to zeroing with the 50-move rule in force.
    Dtz50 = 3,
    /// No distance: the result with the 50-move rule's cursed wins and blessed losses
    /// (`Wdl5`), which DTM and DTZ50 give too; its file lets a probe that wants no more read
    /// one value, and is small.
    Wdl = 4,
}

impl Metric {
    /// The three distance metrics, each in a file of every endgame.
    pub const ALL: [Metric; 3] = [Metric::Dtm, Metric::Dtz, Metric::Dtz50];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Dtm => "dtm",
            Metric::Dtz => "dtz",
            Metric::Dtz50 => "dtz50",
            Metric::Wdl => "wdl",
        }
    }

    pub(super) fn from_code(c: u8) -> Option<Metric> {
        [Metric::Dtm, Metric::Dtz, Metric::Dtz50, Metric::Wdl]
            .into_iter()
            .find(|m| *m as u8 == c)
    }

    /// Can this metric's files have value encoding `encoding` (in a file of `version`)?
    pub(super) fn allows(self, encoding: u8, version: u32) -> bool {
        match self {
            Metric::Wdl => {
                encoding == ENCODING_WDL5 || encoding == ENCODING_WDL5_PACKED && version > 1
            }
            _ => encoding == ENCODING_WDL_DEPTH || encoding == ENCODING_DEPTH && version > 1,
        }
    }
}

/// The result of a position for the side to move with the 50-move rule in force, from a fresh
/// counter, in Syzygy's five values: a cursed win is a win that needs more than the rule
/// allows (a draw under the rule), a blessed loss the same for the side that loses it. Ordered
/// from worst to best.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Wdl5 {
    Loss,
    BlessedLoss,
    Draw,
    CursedWin,
    Win,
}

impl Wdl5 {
    const ALL: [Wdl5; 5] = [
        Wdl5::Loss,
        Wdl5::BlessedLoss,
        Wdl5::Draw,
        Wdl5::CursedWin,
        Wdl5::Win,
    ];

    /// The result of an entry whose DTM and DTZ50 values are `dtm` and `dtz50`; None for a
    /// broken entry.
    pub fn of(dtm: TbValue, dtz50: TbValue) -> Option<Wdl5> {
        Some(match (dtm.outcome(), dtz50.outcome()) {
            (Outcome::Broken, _) | (_, Outcome::Broken) => return None,
            (_, Outcome::Win(_)) => Wdl5::Win,
            (_, Outcome::Loss(_)) => Wdl5::Loss,
            (Outcome::Win(_), _) => Wdl5::CursedWin,
            (Outcome::Loss(_), _) => Wdl5::BlessedLoss,
            _ => Wdl5::Draw,
        })
    }

    /// Its code in a WDL file: 1 (loss) to 5 (win); 0 is a broken entry's mark.
    pub fn code(self) -> u16 {
        self as u16 + 1
    }

    /// The result of a WDL file's code; None for 0 (broken) and codes out of range.
    pub fn from_code(code: u16) -> Option<Wdl5> {
        Wdl5::ALL.get((code as usize).checked_sub(1)?).copied()
    }

    /// The result a metric counts: DTZ50's with the 50-move rule, DTM's and DTZ's without.
    pub fn under(self, metric: Metric) -> Wdl5 {
        if metric == Metric::Dtz50 {
            self
        } else {
            self.without_rule()
        }
    }

    /// The result when the 50-move rule is not applied.
    pub fn without_rule(self) -> Wdl5 {
        match self {
            Wdl5::CursedWin => Wdl5::Win,
            Wdl5::BlessedLoss => Wdl5::Loss,
            other => other,
        }
    }
}

/// One entry's value: broken, draw, or a win or loss with its depth in moves of the metric
/// (for DTM, winner's moves; a side already mated has a loss in 0).
/// Stored as its encoding: 0 broken, 1 draw, 2n win in n (n >= 1), 2n + 3 loss in n (n >= 0).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct TbValue(pub(super) u16);

/// A value taken apart.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum Outcome {
    Broken,
    Draw,
    Win(u16),
    Loss(u16),
}

/// The value of a depth-coded entry (`ENCODING_DEPTH`) of `metric` whose result (the WDL
/// file's) is `result` and whose stored depth is `depth`.
#[inline]
pub fn from_depth(metric: Metric, result: Wdl5, depth: u16) -> TbValue {
    match result.under(metric) {
        Wdl5::Win => TbValue(2 * depth),
        Wdl5::Loss => TbValue(2 * depth + 3),
        _ => TbValue::DRAW,
    }
}

impl TbValue {
    pub const BROKEN: TbValue = TbValue(0);
    pub const DRAW: TbValue = TbValue(1);
    /// The largest depth a win can have (32767 moves).
    pub const MAX_WIN: u16 = (u16::MAX - 1) / 2;
    /// The largest depth a loss can have (32766 moves).
    pub const MAX_LOSS: u16 = (u16::MAX - 3) / 2;

    /// Win in `n` >= 1 moves; None if `n` is 0 or above `MAX_WIN`.
    pub fn win(n: u16) -> Option<TbValue> {
        (1..=Self::MAX_WIN).contains(&n).then(|| TbValue(2 * n))
    }

    /// Loss in `n` >= 0 moves; None above `MAX_LOSS`.
    pub fn loss(n: u16) -> Option<TbValue> {
        (n <= Self::MAX_LOSS).then(|| TbValue(2 * n + 3))
    }

    pub fn outcome(self) -> Outcome {
        match self.0 {
            0 => Outcome::Broken,
            1 => Outcome::Draw,
            v if v % 2 == 0 => Outcome::Win(v / 2),
            v => Outcome::Loss((v - 3) / 2),
        }
    }

    /// The stored encoding.
    pub fn raw(self) -> u16 {
        self.0
    }

    pub fn from_raw(v: u16) -> TbValue {
        TbValue(v)
    }
}

impl fmt::Debug for TbValue {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{:?}", self.outcome())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_encoding_round_trip() {
        assert_eq!(TbValue::BROKEN.outcome(), Outcome::Broken);
        assert_eq!(TbValue::DRAW.outcome(), Outcome::Draw);
        for n in 1..=TbValue::MAX_WIN {
            assert_eq!(TbValue::win(n).unwrap().outcome(), Outcome::Win(n));
        }
        for n in 0..=TbValue::MAX_LOSS {
            assert_eq!(TbValue::loss(n).unwrap().outcome(), Outcome::Loss(n));
        }
        assert!(TbValue::win(0).is_none());
        assert!(TbValue::win(TbValue::MAX_WIN + 1).is_none());
        // 5-man DTM goes to 127: a win in 127 still fits one byte.
        assert!(TbValue::win(127).unwrap().raw() <= 255);
    }
}
