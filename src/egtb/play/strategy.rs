//! The root strategy when the root position is in a table: SZ°Z50⁻Z⁻ for the winner, its
//! mirror for the loser, and a draw-keeping rule for drawn positions (Bourzutschky, Tamplin,
//! Haworth 2005, Section 5: SZ° guards the current phase, SZ50⁻ safeguards any win available
//! under the 50-move rule, Z⁻ shortens the phase). A pure function over the table values of the
//! legal moves (`choose`, `rank`), which `analyse_root` probes from the registry; the search
//! calls both at the root (`search::thread`), `engine probe` prints them.
//!
//! Exact rules, with `left = 100 - h` plies before a claim (h the game's half-move counter) and
//! every value taken from the mover's point of view after the move (`MoveValues`):
//! - **won under the rule** (some move has DTZ50 = win in d <= left):
//!   SZ°: keep the moves whose DTZ is a win in d <= left (they zero, or mate, before a claim is
//!   possible); if none, the winning moves of least DTZ (Z⁻). Then Z50⁻: those of least DTZ50.
//!   Then Z⁻: those of least DTZ. Then least DTM; then the first in move order.
//! - **lost under the rule** (every move loses under it): the moves of greatest DTZ50 (they
//!   keep the opponent's zeroing as far away as possible, the best hope of a 50-move draw), then
//!   greatest DTZ, then greatest DTM: never a move that loses faster when a slower one exists.
//! - **drawn under the rule**: only moves that keep the draw under the rule (with the counter
//!   as it is). Among them: first those whose result without the rule is best for us (a cursed
//!   win before a plain draw before a blessed loss: a cursed win becomes a real win if the
//!   opponent zeroes carelessly); among cursed wins the least DTZ (Z⁻, keep trying); then the
//!   moves after which the opponent has the most replies that lose under the rule (the most
//!   ways to go wrong); among blessed losses the greatest DTZ; then move order.

use crate::chess::{legal_moves, Move, MoveKind, PieceType, Position};
use crate::egtb::format::{Metric, Outcome, TbValue};
use crate::egtb::play::probe::{depth, Registry, TbProbe, Wdl, RULE50};

/// The value of one root move for the mover, and how many of the opponent's replies to it lose
/// under the 50-move rule (only needed in drawn positions; 0 otherwise).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MoveValues {
    pub v: TbProbe,
    pub zeroing: bool,
    pub opponent_errors: u32,
}

/// The mover's values of a move to a position whose side to move has `child` (probed with a
/// fresh counter). A zeroing move (capture, pawn move) stops the DTZ and DTZ50 counts: it is a
/// win (loss) in 1 if the position reached is lost (won) for the opponent, for DTZ50 from the
/// fresh counter the zeroing gives. DTZ50 deeper than 100 plies is a draw.
pub fn after_move(child: &TbProbe, zeroing: bool) -> TbProbe {
    let back = |v: TbValue| match v.outcome() {
        Outcome::Loss(n) => TbValue::win(n + 1).unwrap_or(TbValue::DRAW),
        Outcome::Win(n) => TbValue::loss(n + 1).unwrap_or(TbValue::DRAW),
        _ => TbValue::DRAW,
    };
    let zero = |w: Wdl| match w {
        Wdl::Loss => TbValue::win(1).expect("1"),
        Wdl::Win => TbValue::loss(1).expect("1"),
        Wdl::Draw => TbValue::DRAW,
    };
    let dtm = match child.dtm.outcome() {
        Outcome::Loss(k) => TbValue::win(k + 1).unwrap_or(TbValue::DRAW),
        Outcome::Win(k) => TbValue::loss(k).unwrap_or(TbValue::DRAW),
        _ => TbValue::DRAW,
    };
    let (dtz, mut dtz50) = if zeroing {
        (zero(child.wdl()), zero(child.wdl50(0)))
    } else {
        (back(child.dtz), back(child.dtz50))
    };
    if depth(dtz50).is_some_and(|d| d > RULE50) {
        dtz50 = TbValue::DRAW;
    }
    TbProbe { dtm, dtz, dtz50 }
}

/// What the strategy chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// Index of the chosen move.
    pub best: usize,
    /// Every move the strategy finds equally good (the chosen one first).
    pub kept: Vec<usize>,
    /// The root's result under the 50-move rule with the game's counter.
    pub wdl50: Wdl,
}

fn d(v: TbValue) -> u32 {
    depth(v).map_or(u32::MAX, u32::from)
}

/// Keeps the elements of `set` with the least `key`.
fn keep_min<K: Ord + Copy>(set: &mut Vec<usize>, key: impl Fn(usize) -> K) {
    if let Some(best) = set.iter().map(|&i| key(i)).min() {
        set.retain(|&i| key(i) == best);
    }
}

/// SZ°Z50⁻Z⁻ and its mirror (see the module notes). `halfmove` is the game's counter at the
/// root. None if there is no move.
pub fn choose(halfmove: u16, moves: &[MoveValues]) -> Option<Choice> {
    if moves.is_empty() {
        return None;
    }
    let left = RULE50.saturating_sub(halfmove);
    let w50 = |i: usize| moves[i].v.wdl50(halfmove);
    let result = (0..moves.len()).map(w50).max().expect("not empty");
    let mut set: Vec<usize> = (0..moves.len()).filter(|&i| w50(i) == result).collect();
    match result {
        Wdl::Win => {
            // SZ°: moves that zero (or mate) in time; else Z⁻ among plain wins.
            let zero_in_time: Vec<usize> = (0..moves.len())
                .filter(|&i| matches!(moves[i].v.dtz.outcome(), Outcome::Win(n) if n <= left))
                .collect();
            set = if zero_in_time.is_empty() {
                let mut s: Vec<usize> = (0..moves.len())
                    .filter(|&i| moves[i].v.wdl() == Wdl::Win)
                    .collect();
                keep_min(&mut s, |i| d(moves[i].v.dtz));
                s
            } else {
                zero_in_time
            };
            // Z50⁻ by preference: wins by depth first, then draws, then losses.
            keep_min(&mut set, |i| match moves[i].v.dtz50.outcome() {
                Outcome::Win(n) => (0, n as i32),
                Outcome::Loss(n) => (2, -(n as i32)),
                _ => (1, 0),
            });
            keep_min(&mut set, |i| d(moves[i].v.dtz));
            keep_min(&mut set, |i| d(moves[i].v.dtm));
        }
        Wdl::Loss => {
            keep_min(&mut set, |i| std::cmp::Reverse(d(moves[i].v.dtz50)));
            keep_min(&mut set, |i| std::cmp::Reverse(d(moves[i].v.dtz)));
            keep_min(&mut set, |i| std::cmp::Reverse(d(moves[i].v.dtm)));
        }
        Wdl::Draw => {
            keep_min(&mut set, |i| std::cmp::Reverse(moves[i].v.wdl()));
            match moves[set[0]].v.wdl() {
                Wdl::Win => keep_min(&mut set, |i| d(moves[i].v.dtz)),
                Wdl::Loss => keep_min(&mut set, |i| std::cmp::Reverse(d(moves[i].v.dtz))),
                Wdl::Draw => {}
            }
            keep_min(&mut set, |i| std::cmp::Reverse(moves[i].opponent_errors));
        }
    }
    Some(Choice {
        best: set[0],
        kept: set,
        wdl50: result,
    })
}

/// Every move in the strategy's order of preference: the moves `choose` keeps (in move order),
/// then those it would keep were they gone, and so on. The first is `choose`'s best; MultiPV
/// lists the root's moves in this order.
pub fn rank(halfmove: u16, moves: &[MoveValues]) -> Vec<usize> {
    let mut left: Vec<usize> = (0..moves.len()).collect();
    let mut order = Vec::with_capacity(moves.len());
    while !left.is_empty() {
        let values: Vec<MoveValues> = left.iter().map(|&i| moves[i]).collect();
        let choice = choose(halfmove, &values).expect("moves are left");
        let kept: Vec<usize> = choice.kept.iter().map(|&k| left[k]).collect();
        left.retain(|i| !kept.contains(i));
        order.extend(kept);
    }
    order
}

/// SM⁻ (`Metric::Dtm`) or SZ⁻ (`Metric::Dtz`) and its mirror, for comparison in tests and
/// benchmarks: the winner takes the least of the metric (then the least DTM), the loser the
/// greatest, a drawn side any move that keeps the plain draw. Ignores the 50-move rule, which is
/// the point: the paper's strategies without DTZ50 that fail in KBBKNN. `Metric::Wdl` has no
/// distance: it chooses by DTM alone.
pub fn choose_least(moves: &[MoveValues], metric: Metric) -> Option<usize> {
    let value = |i: usize| match metric {
        Metric::Dtm | Metric::Wdl => moves[i].v.dtm,
        Metric::Dtz => moves[i].v.dtz,
        Metric::Dtz50 => moves[i].v.dtz50,
    };
    let result = moves.iter().map(|m| m.v.wdl()).max()?;
    let mut set: Vec<usize> = (0..moves.len())
        .filter(|&i| moves[i].v.wdl() == result)
        .collect();
    match result {
        Wdl::Win => {
            keep_min(&mut set, |i| d(value(i)));
            keep_min(&mut set, |i| d(moves[i].v.dtm));
        }
        Wdl::Loss => {
            keep_min(&mut set, |i| std::cmp::Reverse(d(value(i))));
            keep_min(&mut set, |i| std::cmp::Reverse(d(moves[i].v.dtm)));
        }
        Wdl::Draw => {}
    }
    set.first().copied()
}

/// A root position's table values and those of each legal move (mover's view after the move),
/// as `engine probe` prints them and the root strategy weighs them.
#[derive(Clone, Debug)]
pub struct RootAnalysis {
    pub root: TbProbe,
    pub moves: Vec<(Move, MoveValues)>,
    /// Probes made (for `tbhits`).
    pub probes: u64,
}

/// Probes `pos` and every position one move away (and, if `count_errors`, two moves away, for
/// the opponent's losing replies that the drawn-position rule counts). None if any of them is
/// not covered by `reg`. Not for the hot path: it allocates.
pub fn analyse_root(reg: &Registry, pos: &Position, count_errors: bool) -> Option<RootAnalysis> {
    let root = reg.probe(pos)?;
    let mut probes = 1;
    let mut p = pos.clone();
    let h = pos.halfmove_clock();
    let mut moves = Vec::new();
    for m in legal_moves(pos).iter() {
        let zeroing = m.kind() == MoveKind::EnPassant
            || p.piece_at(m.to()).is_some()
            || p.piece_at(m.from()).map(|x| x.kind) == Some(PieceType::Pawn);
        p.make_move(m);
        let child = reg.probe(&p);
        probes += 1;
        let mut errors = 0;
        if count_errors && child.is_some() {
            // Opponent replies after which the opponent loses under the rule (our win).
            let ch = if zeroing { 0 } else { h + 1 };
            for r in legal_moves(&p).iter() {
                let rz = r.kind() == MoveKind::EnPassant
                    || p.piece_at(r.to()).is_some()
                    || p.piece_at(r.from()).map(|x| x.kind) == Some(PieceType::Pawn);
                p.make_move(r);
                if let Some(g) = reg.probe(&p) {
                    let gh = if rz { 0 } else { ch + 1 };
                    if g.wdl50(gh) == Wdl::Win {
                        errors += 1;
                    }
                }
                probes += 1;
                p.unmake_move();
            }
        }
        p.unmake_move();
        let child = child?;
        moves.push((
            m,
            MoveValues {
                v: after_move(&child, zeroing),
                zeroing,
                opponent_errors: errors,
            },
        ));
    }
    Some(RootAnalysis {
        root,
        moves,
        probes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(n: u16) -> TbValue {
        TbValue::win(n).unwrap()
    }
    fn l(n: u16) -> TbValue {
        TbValue::loss(n).unwrap()
    }
    const D: TbValue = TbValue::DRAW;

    fn mv(dtm: TbValue, dtz: TbValue, dtz50: TbValue) -> MoveValues {
        MoveValues {
            v: TbProbe { dtm, dtz, dtz50 },
            zeroing: false,
            opponent_errors: 0,
        }
    }

    #[test]
    fn after_move_backs_up_and_zeroes() {
        let child = TbProbe {
            dtm: l(3),
            dtz: l(10),
            dtz50: l(10),
        };
        let a = after_move(&child, false);
        assert_eq!(a.dtm, w(4));
        assert_eq!(a.dtz, w(11));
        assert_eq!(a.dtz50, w(11));
        let z = after_move(&child, true);
        assert_eq!((z.dtz, z.dtz50), (w(1), w(1)));
        // Deeper than 100 plies under the rule is a draw.
        let far = TbProbe {
            dtm: l(60),
            dtz: l(100),
            dtz50: l(100),
        };
        assert_eq!(after_move(&far, false).dtz50, D);
        // Mated child.
        let mated = TbProbe {
            dtm: l(0),
            dtz: l(0),
            dtz50: l(0),
        };
        let m = after_move(&mated, false);
        assert_eq!((m.dtm, m.dtz, m.dtz50), (w(1), w(1), w(1)));
        // A won child is a loss for the mover.
        let won = TbProbe {
            dtm: w(5),
            dtz: w(7),
            dtz50: w(7),
        };
        let b = after_move(&won, false);
        assert_eq!((b.dtm, b.dtz, b.dtz50), (l(5), l(8), l(8)));
    }

    #[test]
    fn winner_prefers_50_move_safe_over_dtm() {
        // Move 0: quickest mate but its zeroing lies beyond the rule from h = 60.
        // Move 1: slower mate, zeroes in 30 plies.
        let moves = [mv(w(10), w(45), w(45)), mv(w(20), w(30), w(30))];
        let c = choose(60, &moves).unwrap();
        assert_eq!(c.wdl50, Wdl::Win);
        assert_eq!(c.best, 1);
        // With a fresh counter both win; Z50⁻ still picks the least DTZ50.
        assert_eq!(choose(0, &moves).unwrap().best, 1);
        // SM⁻ would take move 0, SZ⁻ move 1.
        assert_eq!(choose_least(&moves, Metric::Dtm), Some(0));
        assert_eq!(choose_least(&moves, Metric::Dtz), Some(1));
    }

    #[test]
    fn sz0_filters_before_z50() {
        // Move 0 zeroes in time under plain DTZ but its zeroing lands in a cursed win (DTZ50
        // draw); move 1 wins under the rule. The result must be move 1.
        let moves = [mv(w(5), w(3), D), mv(w(9), w(12), w(12))];
        let c = choose(0, &moves).unwrap();
        assert_eq!(c.best, 1);
    }

    #[test]
    fn counter_turns_win_into_draw() {
        // Only win needs 40 plies; with 70 on the counter it is a draw: keep the plain win.
        let moves = [mv(w(30), w(40), w(40)), mv(D, D, D)];
        let c = choose(70, &moves).unwrap();
        assert_eq!(c.wdl50, Wdl::Draw);
        assert_eq!(c.best, 0);
        assert_eq!(choose(0, &moves).unwrap().wdl50, Wdl::Win);
    }

    #[test]
    fn loser_maximises_and_keeps_draws() {
        let moves = [
            mv(l(3), l(5), l(5)),
            mv(l(9), l(20), l(20)),
            mv(l(9), l(8), l(8)),
        ];
        let c = choose(0, &moves).unwrap();
        assert_eq!(c.wdl50, Wdl::Loss);
        assert_eq!(c.best, 1);
        // A loss too deep for the counter is a draw under the rule and must be taken.
        let moves = [mv(l(3), l(5), l(5)), mv(l(30), l(60), l(60))];
        let c = choose(50, &moves).unwrap();
        assert_eq!(c.wdl50, Wdl::Draw);
        assert_eq!(c.best, 1);
    }

    #[test]
    fn rank_follows_the_strategy_then_the_rest() {
        // From h = 60: move 1 is SZ°'s pick, move 0 wins only without the rule (its DTZ50 is
        // beyond the 40 plies left), move 2 draws, move 3 loses, move 4 ties with move 1.
        let moves = [
            mv(w(10), w(45), w(45)),
            mv(w(20), w(30), w(30)),
            mv(D, D, D),
            mv(l(4), l(6), l(6)),
            mv(w(20), w(30), w(30)),
        ];
        let order = rank(60, &moves);
        assert_eq!(order[0], choose(60, &moves).unwrap().best);
        assert_eq!(order, vec![1, 4, 0, 2, 3]);
        assert!(rank(0, &[]).is_empty());
    }

    #[test]
    fn drawn_prefers_traps() {
        let mut a = mv(D, D, D);
        a.opponent_errors = 1;
        let mut b = mv(D, D, D);
        b.opponent_errors = 4;
        let lose = mv(l(2), l(2), l(2));
        let c = choose(0, &[lose, a, b]).unwrap();
        assert_eq!(c.wdl50, Wdl::Draw);
        assert_eq!(c.best, 2);
        // A cursed win comes before a plain draw.
        let cursed = mv(w(40), w(70), D);
        assert_eq!(choose(0, &[a, cursed]).unwrap().best, 1);
    }
}
