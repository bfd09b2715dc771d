//! What an endgame's files leave out for one side to move, by one ply, as Syzygy's tables
//! answer the side their DTZ file leaves out: DTZ and DTZ50 from the stored half's values for
//! the moves that stay in the endgame and the results (the WDL files, two-sided) of the
//! positions zeroing moves reach, which stop the count; DTM from the DTM of every position the
//! moves reach, worked out again by one ply where that is left out too. The values are exactly
//! those a two-sided file would hold (`plies`: the generator's and the verifier's own
//! arithmetic).

use super::file::{Outcome, TbValue, Wdl5};
use super::index::{Half, TbPosition};
use super::material::Material;
use super::plies::{
    backed, capped_at_rule50, loss, preference, wdl_of_result, zeroing, CODE_DRAW, CODE_NONE,
};
use super::tables::EndgameTables;
use crate::chess::{legal_moves, Color, Move, MoveKind, Piece, PieceType, Position, Square};
use std::cell::RefCell;

/// The tables of the endgames that moves reach.
pub trait Endgames {
    /// The tables of `m` (canonical colouring), None where they are not at hand.
    fn endgame(&self, m: &Material) -> Option<&EndgameTables>;
}

/// Tables in any order.
impl Endgames for [EndgameTables] {
    fn endgame(&self, m: &Material) -> Option<&EndgameTables> {
        self.iter().find(|t| t.material() == *m)
    }
}

/// The table and entry of `succ`, reached by `m` from `pos`, a position of `own`: `own` itself
/// unless the move captures or promotes (most moves: no material to work out), else an
/// endgame of `all`; Some(None) for bare kings, None where the table is not at hand.
#[inline]
fn locate<'a>(
    pos: &Position,
    m: Move,
    succ: &TbPosition,
    own: &'a EndgameTables,
    all: &'a (impl Endgames + ?Sized),
) -> Option<Option<(&'a EndgameTables, Half, u64)>> {
    let converts =
        m.is_promotion() || m.kind() == MoveKind::EnPassant || pos.piece_at(m.to()).is_some();
    if !converts {
        let (h, i) = own.entry(succ)?;
        return Some(Some((own, h, i)));
    }
    let m = succ.material();
    if m.men() == 2 {
        return Some(None);
    }
    let m = m.canonical().0;
    let t = if m == own.material() {
        own
    } else {
        all.endgame(&m)?
    };
    let (h, i) = t.entry(succ)?;
    Some(Some((t, h, i)))
}

/// DTZ and DTZ50 of `pos`, a position of `own` (its men those of `tb`), from its moves: `own`'s
/// other half for the moves that stay, `own`'s results for its pawn moves, `others` for
/// captures and promotions. None if a value needed is not at hand.
pub fn zeroing_values(
    pos: &Position,
    tb: &TbPosition,
    own: &EndgameTables,
    others: &(impl Endgames + ?Sized),
) -> Option<[TbValue; 2]> {
    let moves = legal_moves(pos);
    if moves.is_empty() {
        let v = if pos.in_check() { loss(0) } else { CODE_DRAW };
        return Some([TbValue::from_raw(v); 2]);
    }
    let mut best = [CODE_NONE; 2];
    for m in moves.iter() {
        let (succ, zeroes) = successor(pos, tb, m);
        let options = if zeroes {
            let r = match locate(pos, m, &succ, own, others)? {
                None => Wdl5::Draw,
                Some((t, h, i)) => t.result(h, i)?,
            };
            [false, true].map(|rule| zeroing(wdl_of_result(r, rule)))
        } else {
            let (h, i) = own.entry(&succ)?;
            own.zeroing_pair(h, i)?.map(|v| backed(v.raw()))
        };
        for k in 0..2 {
            if preference(options[k]) > preference(best[k]) {
                best[k] = options[k];
            }
        }
    }
    best[1] = capped_at_rule50(best[1]);
    Some(best.map(TbValue::from_raw))
}

/// DTM of `tb`, a position of `own` whose result is `result`, from its moves: the DTM of
/// every position they reach (stored, or by one ply again where its file leaves it out, as
/// `EndgameTables::dtm`), `all` holding the endgames that captures and promotions reach. A win
/// in n moves has a move to a loss in n - 1 and none to a shorter one; a loss in n has every
/// move to a win, the longest in n. None if a value needed is not at hand, or the values
/// disagree with the result.
pub fn dtm_value(
    tb: &TbPosition,
    result: Wdl5,
    own: &EndgameTables,
    all: &(impl Endgames + ?Sized),
) -> Option<TbValue> {
    let won = match result.without_rule() {
        Wdl5::Win => true,
        Wdl5::Loss => false,
        _ => return Some(TbValue::DRAW),
    };
    with_scratch(|pos| {
        set_position(pos, tb);
        let moves = legal_moves(pos);
        if moves.is_empty() {
            return (!won && pos.in_check()).then(|| TbValue::loss(0)).flatten();
        }
        // The shortest loss a move reaches (a win), or the longest win (a loss).
        let mut best: Option<u16> = None;
        for m in moves.iter() {
            let (succ, _) = successor(pos, tb, m);
            let Some((t, h, i)) = locate(pos, m, &succ, own, all)? else {
                if won {
                    continue; // bare kings: a draw
                }
                return None;
            };
            let result = t.result(h, i)?;
            match (won, result.without_rule()) {
                (true, Wdl5::Loss) => {
                    let Outcome::Loss(k) = t.dtm_with(h, i, Some(result), all)?.outcome() else {
                        return None;
                    };
                    best = Some(best.map_or(k, |b| b.min(k)));
                }
                (true, _) => {}
                (false, Wdl5::Win) => {
                    let Outcome::Win(k) = t.dtm_with(h, i, Some(result), all)?.outcome() else {
                        return None;
                    };
                    best = Some(best.map_or(k, |b| b.max(k)));
                }
                (false, _) => return None,
            }
        }
        let k = best?;
        if won {
            TbValue::win(k + 1)
        } else {
            TbValue::loss(k)
        }
    })
}

thread_local! {
    /// Positions to set up and generate moves in, one per level of `dtm_value`'s recursion,
    /// made once per thread and kept (a position holds its history's allocation).
    static SCRATCH: RefCell<Vec<Position>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with a position of this thread's scratch, taken for the call's duration.
fn with_scratch<R>(f: impl FnOnce(&mut Position) -> R) -> R {
    let mut pos = SCRATCH
        .with(|s| s.borrow_mut().pop())
        .unwrap_or_else(Position::startpos);
    let r = f(&mut pos);
    SCRATCH.with(|s| s.borrow_mut().push(pos));
    r
}

/// Sets `pos` to the position `tb` (no castling, fresh counters).
pub fn set_position(pos: &mut Position, tb: &TbPosition) {
    pos.clear();
    for color in Color::BOTH {
        for kind in PieceType::ALL {
            for sq in tb.pieces[color.index()][kind.index()] {
                pos.put_piece(Piece::new(color, kind), sq);
            }
        }
    }
    pos.set_side_to_move(tb.stm);
    if let Some(ep) = tb.ep {
        pos.set_ep_if_capturable(ep);
    }
    pos.refresh_checkers();
}

/// The position after `m`, a legal move of `pos` (whose men are those of `tb`), and whether it
/// zeroes the 50-move counter. Built from the move's squares rather than by make/unmake:
/// which moves are legal is the chess core's answer, what they do to the men is plain.
#[inline]
pub fn successor(pos: &Position, tb: &TbPosition, m: Move) -> (TbPosition, bool) {
    let us = tb.stm;
    let (ui, ti) = (us.index(), (!us).index());
    let (from, to) = (m.from(), m.to());
    let mover = pos.piece_at(from).expect("a legal move has a mover").kind;
    let mut s = *tb;
    s.stm = !us;
    s.ep = None;
    let mut zeroing = mover == PieceType::Pawn;
    if let Some(victim) = pos.piece_at(to) {
        s.pieces[ti][victim.kind.index()].clear(to);
        zeroing = true;
    }
    s.pieces[ui][mover.index()].clear(from);
    let lands = match m.kind() {
        MoveKind::Promotion(kind) => kind,
        _ => mover,
    };
    s.pieces[ui][lands.index()].set(to);
    match m.kind() {
        MoveKind::EnPassant => {
            let victim = Square::new(to.file(), from.rank());
            s.pieces[ti][PieceType::Pawn.index()].clear(victim);
        }
        MoveKind::DoublePush => {
            s.ep = Some(Square::new(from.file(), (from.rank() + to.rank()) / 2))
        }
        _ => {}
    }
    (s, zeroing)
}
