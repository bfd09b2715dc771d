//! The DTZ and DTZ50 of the side to move whose half an endgame's files do not store, by one
//! ply, as Syzygy's tables answer the side their DTZ file leaves out: the minimax of its moves,
//! the stored half's values for the moves that stay in the endgame and the results (the WDL
//! files, two-sided) of the positions zeroing moves reach. Those moves stop the count, so the
//! results are all they need; the values are exactly those a two-sided file would hold
//! (`plies`: the generator's and the verifier's own arithmetic).

use super::file::{TbValue, Wdl5};
use super::index::TbPosition;
use super::plies::{
    backed, capped_at_rule50, loss, preference, wdl_of_result, zeroing, CODE_DRAW, CODE_NONE,
};
use super::tables::EndgameTables;
use crate::chess::{legal_moves, Color, Move, MoveKind, Piece, PieceType, Position, Square};

/// The results of the positions that zeroing moves reach in other endgames.
pub trait Results {
    /// The result of `succ` (three men or more, another endgame than the one probed), None
    /// where its table is not at hand.
    fn result_of(&self, succ: &TbPosition) -> Option<Wdl5>;
}

/// Sub-endgames' tables, in any order.
impl Results for [EndgameTables] {
    fn result_of(&self, succ: &TbPosition) -> Option<Wdl5> {
        let m = succ.material().canonical().0;
        let t = self.iter().find(|t| t.material() == m)?;
        let (h, i) = t.entry(succ)?;
        t.result(h, i)
    }
}

/// DTZ and DTZ50 of `pos`, a position of `own` (its men those of `tb`), from its moves: `own`'s
/// other half for the moves that stay, `own`'s results for its pawn moves, `others` for
/// captures and promotions. None if a value needed is not at hand.
pub fn zeroing_values(
    pos: &Position,
    tb: &TbPosition,
    own: &EndgameTables,
    others: &(impl Results + ?Sized),
) -> Option<[TbValue; 2]> {
    let moves = legal_moves(pos);
    if moves.is_empty() {
        let v = if pos.in_check() { loss(0) } else { CODE_DRAW };
        return Some([TbValue::from_raw(v); 2]);
    }
    let own_material = own.material();
    let mut best = [CODE_NONE; 2];
    for m in moves.iter() {
        let (succ, zeroes) = successor(pos, tb, m);
        let options = if zeroes {
            let r = if succ.material().men() == 2 {
                Wdl5::Draw
            } else if succ.material().canonical().0 == own_material {
                let (h, i) = own.entry(&succ)?;
                own.result(h, i)?
            } else {
                others.result_of(&succ)?
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
