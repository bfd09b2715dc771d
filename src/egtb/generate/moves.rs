//! Moves and un-moves on `TbPosition` for the retrograde generator (Thompson 1996, Section 5:
//! "move" and "unmove" generators). Built on the attack tables of `crate::chess::attacks`; no
//! second copy of the rules' attack logic. The verifier cross-checks both against the chess
//! core's legal move generator.

use crate::chess::attacks::{king_attacks, knight_attacks, pawn_attacks, piece_attacks};
use crate::chess::{Color, PieceType, Square};
use crate::egtb::TbPosition;

const PIECES: [PieceType; 5] = [
    PieceType::Knight,
    PieceType::Bishop,
    PieceType::Rook,
    PieceType::Queen,
    PieceType::King,
];

/// What a move does to the material and to the 50-move counter.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum MoveClass {
    /// A non-capturing piece or king move: same endgame, counter not reset.
    Quiet,
    /// A non-capturing, non-promoting pawn move: same endgame, counter reset.
    Pawn,
    /// A capture or a promotion: another (smaller or other) endgame. `captured` and `promoted`
    /// are `PieceType::index()` values, 5 meaning none.
    Convert { captured: u8, promoted: u8 },
}

pub const NONE: u8 = 5;

#[inline(always)]
fn forward(c: Color) -> i8 {
    if c == Color::White {
        8
    } else {
        -8
    }
}

/// Relative rank 0..7 of `sq` for `c`.
#[inline(always)]
fn rel_rank(sq: Square, c: Color) -> u8 {
    if c == Color::White {
        sq.rank()
    } else {
        7 - sq.rank()
    }
}

#[inline(always)]
fn kind_at(pos: &TbPosition, color: Color, sq: Square) -> usize {
    let p = &pos.pieces[color.index()];
    (0..6).find(|&k| p[k].contains(sq)).unwrap_or(NONE as usize)
}

/// Calls `f(successor, class)` for every legal move of the side to move; stops early (and
/// returns false) when `f` returns false. The successor has the other side to move and its
/// e.p. square set after a double step (the index ignores it when no pawn can capture).
#[inline]
pub fn for_each_move(pos: &TbPosition, mut f: impl FnMut(&TbPosition, MoveClass) -> bool) -> bool {
    let us = pos.stm;
    let them = !us;
    let (ui, ti) = (us.index(), them.index());
    let occ = pos.occupied();
    let own = pos.side(us);
    let opp = pos.side(them);
    let their_king = pos.pieces[ti][PieceType::King.index()];
    let mut emit = |succ: &mut TbPosition, class: MoveClass| -> bool {
        succ.stm = them;
        let k = succ.king(us);
        if succ.attacked_by(k, them) {
            return true; // illegal: own king left in check
        }
        f(succ, class)
    };
    for kind in PIECES {
        let k = kind.index();
        for from in pos.pieces[ui][k] {
            let targets = piece_attacks(kind, from, occ) & !own & !their_king;
            for to in targets {
                let mut s = *pos;
                s.ep = None;
                s.pieces[ui][k].0 ^= (1u64 << from.0) | (1u64 << to.0);
                let class = if opp.contains(to) {
                    let c = kind_at(pos, them, to);
                    s.pieces[ti][c].clear(to);
                    MoveClass::Convert {
                        captured: c as u8,
                        promoted: NONE,
                    }
                } else {
                    MoveClass::Quiet
                };
                if !emit(&mut s, class) {
                    return false;
                }
            }
        }
    }
    let p = PieceType::Pawn.index();
    let fwd = forward(us);
    for from in pos.pieces[ui][p] {
        let promotes = rel_rank(from, us) == 6;
        // Promoting pushes (the others are `for_each_pawn_push`'s, below).
        let to = from.offset(fwd);
        if promotes && !occ.contains(to) {
            let mut s = *pos;
            s.ep = None;
            s.pieces[ui][p].clear(from);
            for promo in PieceType::PROMOTIONS {
                let mut t = s;
                t.pieces[ui][promo.index()].set(to);
                let class = MoveClass::Convert {
                    captured: NONE,
                    promoted: promo.index() as u8,
                };
                if !emit(&mut t, class) {
                    return false;
                }
            }
        }
        // Captures.
        for to in pawn_attacks(us, from) & opp & !their_king {
            let c = kind_at(pos, them, to);
            let mut s = *pos;
            s.ep = None;
            s.pieces[ui][p].clear(from);
            s.pieces[ti][c].clear(to);
            if promotes {
                for promo in PieceType::PROMOTIONS {
                    let mut t = s;
                    t.pieces[ui][promo.index()].set(to);
                    let class = MoveClass::Convert {
                        captured: c as u8,
                        promoted: promo.index() as u8,
                    };
                    if !emit(&mut t, class) {
                        return false;
                    }
                }
            } else {
                s.pieces[ui][p].set(to);
                let class = MoveClass::Convert {
                    captured: c as u8,
                    promoted: NONE,
                };
                if !emit(&mut s, class) {
                    return false;
                }
            }
        }
        // En passant.
        if let Some(ep) = pos.ep {
            if pawn_attacks(us, from).contains(ep) {
                let victim = ep.offset(-fwd);
                if pos.pieces[ti][p].contains(victim) {
                    let mut s = *pos;
                    s.ep = None;
                    s.pieces[ui][p].0 ^= (1u64 << from.0) | (1u64 << ep.0);
                    s.pieces[ti][p].clear(victim);
                    let class = MoveClass::Convert {
                        captured: p as u8,
                        promoted: NONE,
                    };
                    if !emit(&mut s, class) {
                        return false;
                    }
                }
            }
        }
    }
    for_each_pawn_push(pos, |succ| f(succ, MoveClass::Pawn))
}

/// Calls `f(successor)` for every legal non-promoting pawn push, single or double, of the side
/// to move (the moves `for_each_move` classes as `MoveClass::Pawn`); stops early (and returns
/// false) when `f` returns false. DTZ's solver values these moves on their own, so they have a
/// generator that skips every other move.
#[inline]
pub fn for_each_pawn_push(pos: &TbPosition, mut f: impl FnMut(&TbPosition) -> bool) -> bool {
    let us = pos.stm;
    let ui = us.index();
    let p = PieceType::Pawn.index();
    let occ = pos.occupied();
    let fwd = forward(us);
    let mut emit = |from: Square, to: Square, ep: Option<Square>| -> bool {
        let mut s = *pos;
        s.stm = !us;
        s.ep = ep;
        s.pieces[ui][p].0 ^= (1u64 << from.0) | (1u64 << to.0);
        // A push never gives up a capture, but it may uncover a pin on the own king.
        s.attacked_by(s.king(us), !us) || f(&s)
    };
    for from in pos.pieces[ui][p] {
        let r = rel_rank(from, us);
        let to = from.offset(fwd);
        if r == 6 || occ.contains(to) {
            continue;
        }
        if !emit(from, to, None) {
            return false;
        }
        let to2 = to.offset(fwd);
        if r == 1 && !occ.contains(to2) && !emit(from, to2, Some(to)) {
            return false;
        }
    }
    true
}

/// Is the side to move in check?
#[inline]
pub fn in_check(pos: &TbPosition) -> bool {
    pos.attacked_by(pos.king(pos.stm), !pos.stm)
}

/// Calls `f(predecessor, kind of the man that moved)` for every position from which the side that just moved (the side not
/// to move in `pos`) reached `pos` by a move that stays in this endgame: no un-captures, no
/// un-promotions. With `pawn_moves` false, pawn moves are left out (for DTZ, where they are
/// zeroing moves whose value does not come from `pos`). Predecessors in which the side to move
/// could have captured en passant are emitted too: they are distinct entries of the index.
#[inline]
pub fn for_each_unmove(
    pos: &TbPosition,
    pawn_moves: bool,
    mut f: impl FnMut(&TbPosition, PieceType),
) {
    let s = pos.stm; // the side to move now
    let m = !s; // the side that just moved
    let (mi, si) = (m.index(), s.index());
    let occ = pos.occupied();
    let p = PieceType::Pawn.index();
    let fwd = forward(m);
    // Emit a predecessor (m to move) unless the side then not to move (s) is in check, plus its
    // variants where s had just double-stepped next to a pawn of m.
    let mut emit = |pred: &mut TbPosition, kind: PieceType| {
        pred.stm = m;
        pred.ep = None;
        if pred.attacked_by(pred.king(s), m) {
            return;
        }
        f(pred, kind);
        let s_pawns = pred.pieces[si][p];
        if s_pawns.is_empty() || pred.pieces[mi][p].is_empty() {
            return;
        }
        let occ = pred.occupied();
        let sf = forward(s);
        for dest in s_pawns {
            if rel_rank(dest, s) != 3 {
                continue;
            }
            let crossed = dest.offset(-sf);
            let origin = crossed.offset(-sf);
            if occ.contains(crossed) || occ.contains(origin) {
                continue;
            }
            if (pawn_attacks(s, crossed) & pred.pieces[mi][p]).is_empty() {
                continue;
            }
            let mut q = *pred;
            q.ep = Some(crossed);
            f(&q, kind);
        }
    };
    if let Some(ep) = pos.ep {
        // The last move was the double step that crossed `ep`.
        if pawn_moves {
            let dest = ep.offset(fwd);
            let origin = ep.offset(-fwd);
            if pos.pieces[mi][p].contains(dest) && !occ.contains(origin) && !occ.contains(ep) {
                let mut q = *pos;
                q.pieces[mi][p].0 ^= (1u64 << dest.0) | (1u64 << origin.0);
                emit(&mut q, PieceType::Pawn);
            }
        }
        return;
    }
    for kind in PIECES {
        let k = kind.index();
        for to in pos.pieces[mi][k] {
            let froms = match kind {
                PieceType::Knight => knight_attacks(to),
                PieceType::King => king_attacks(to),
                _ => piece_attacks(kind, to, occ),
            } & !occ;
            for from in froms {
                let mut q = *pos;
                q.pieces[mi][k].0 ^= (1u64 << from.0) | (1u64 << to.0);
                emit(&mut q, kind);
            }
        }
    }
    if !pawn_moves {
        return;
    }
    for to in pos.pieces[mi][p] {
        let r = rel_rank(to, m);
        if r < 2 {
            continue; // on its home rank: it has not moved
        }
        let from = to.offset(-fwd);
        if occ.contains(from) {
            continue;
        }
        let mut q = *pos;
        q.pieces[mi][p].0 ^= (1u64 << from.0) | (1u64 << to.0);
        emit(&mut q, PieceType::Pawn);
        if r == 3 {
            let origin = from.offset(-fwd);
            // After a double step next to a pawn of s, `pos` would carry an e.p. square.
            let capturers = pawn_attacks(m, from) & pos.pieces[si][p];
            if !occ.contains(origin) && capturers.is_empty() {
                let mut q = *pos;
                q.pieces[mi][p].0 ^= (1u64 << origin.0) | (1u64 << to.0);
                emit(&mut q, PieceType::Pawn);
            }
        }
    }
}
