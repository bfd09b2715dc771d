//! Moves and un-moves on `TbPosition` for the retrograde generator (Thompson 1996, Section 5:
//! "move" and "unmove" generators). Built on the attack tables of `crate::chess::attacks`; no
//! second copy of the rules' attack logic. The verifier cross-checks both against the chess
//! core's legal move generator.

use crate::chess::attacks::{
    between, bishop_attacks, king_attacks, knight_attacks, line, pawn_attacks, piece_attacks,
    rook_attacks,
};
use crate::chess::{Bitboard, Color, PieceType, Square};
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
    for_each_conversion(pos, &Legality::of(pos), &mut f)
        && for_each_quiet(pos, |succ, _| f(succ, MoveClass::Quiet))
        && for_each_pawn_push(pos, |succ| f(succ, MoveClass::Pawn))
}

/// `f(successor)` unless the mover's own king is left in check; false if `f` says stop.
#[inline(always)]
fn emit_legal(succ: &mut TbPosition, f: impl FnOnce(&TbPosition) -> bool) -> bool {
    let us = !succ.stm;
    let k = succ.king(us);
    succ.attacked_by(k, succ.stm) || f(succ)
}

/// Calls `f(successor, kind of the man moved)` for every legal non-capturing piece or king move
/// (`MoveClass::Quiet`); stops early (and returns false) when `f` returns false.
#[inline]
pub fn for_each_quiet(pos: &TbPosition, mut f: impl FnMut(&TbPosition, PieceType) -> bool) -> bool {
    let us = pos.stm;
    let ui = us.index();
    let occ = pos.occupied();
    for kind in PIECES {
        let k = kind.index();
        for from in pos.pieces[ui][k] {
            for to in piece_attacks(kind, from, occ) & !occ {
                let mut s = *pos;
                s.ep = None;
                s.stm = !us;
                s.pieces[ui][k].0 ^= (1u64 << from.0) | (1u64 << to.0);
                if !emit_legal(&mut s, |s| f(s, kind)) {
                    return false;
                }
            }
        }
    }
    true
}

/// What the legality of the side to move's moves depends on, found once per position as a
/// legal move generator does: checks, pins and the squares its king may not step to. Moves are
/// then legal by construction instead of made and tested one by one.
pub struct Legality {
    ksq: Square,
    /// Squares the enemy attacks with our king off the board (so that a slider's ray does not
    /// stop at the square the king leaves).
    danger: Bitboard,
    /// Where a man other than the king may go: anywhere; in check, onto the checker or between
    /// it and the king; in double check, nowhere.
    evasion: Bitboard,
    /// Our men pinned to our king (each keeps to the line through the king and itself).
    pinned: Bitboard,
}

impl Legality {
    #[inline]
    pub fn of(pos: &TbPosition) -> Legality {
        let us = pos.stm;
        let them = !us;
        let occ = pos.occupied();
        let ksq = pos.king(us);
        let their = &pos.pieces[them.index()];
        let diagonal = their[PieceType::Bishop.index()] | their[PieceType::Queen.index()];
        let straight = their[PieceType::Rook.index()] | their[PieceType::Queen.index()];
        let without_king = occ ^ Bitboard::from_square(ksq);
        let mut danger = king_attacks(pos.king(them));
        for sq in their[PieceType::Knight.index()] {
            danger |= knight_attacks(sq);
        }
        for sq in their[PieceType::Pawn.index()] {
            danger |= pawn_attacks(them, sq);
        }
        for sq in diagonal {
            danger |= bishop_attacks(sq, without_king);
        }
        for sq in straight {
            danger |= rook_attacks(sq, without_king);
        }
        let checkers = (knight_attacks(ksq) & their[PieceType::Knight.index()])
            | (pawn_attacks(us, ksq) & their[PieceType::Pawn.index()])
            | (bishop_attacks(ksq, occ) & diagonal)
            | (rook_attacks(ksq, occ) & straight);
        let evasion = if checkers.more_than_one() {
            Bitboard::EMPTY
        } else if checkers.any() {
            between(ksq, checkers.lsb()) | checkers
        } else {
            Bitboard(!0)
        };
        let own = pos.side(us);
        let snipers = (bishop_attacks(ksq, Bitboard::EMPTY) & diagonal)
            | (rook_attacks(ksq, Bitboard::EMPTY) & straight);
        let mut pinned = Bitboard::EMPTY;
        for sn in snipers {
            let b = between(ksq, sn) & occ;
            if !b.more_than_one() {
                pinned |= b & own;
            }
        }
        Legality {
            ksq,
            danger,
            evasion,
            pinned,
        }
    }

    /// The legal ones of `targets` for the man (not the king) on `from`.
    #[inline(always)]
    fn keep(&self, from: Square, targets: Bitboard) -> Bitboard {
        if self.pinned.contains(from) {
            targets & self.evasion & line(self.ksq, from)
        } else {
            targets & self.evasion
        }
    }

    /// The legal ones of `targets` for the king.
    #[inline(always)]
    fn king_keep(&self, targets: Bitboard) -> Bitboard {
        targets & !self.danger
    }
}

/// Could `pos`'s side to move have a capture or promotion (`for_each_conversion`)? False only
/// when no man of it attacks a man of the opponent's but the king and it has no pawn: then
/// there is none, legal or not, and `Legality::of`, which costs more than this test, need
/// not be worked out.
#[inline]
pub fn may_convert(pos: &TbPosition) -> bool {
    let (ui, ti) = (pos.stm.index(), (!pos.stm).index());
    if pos.pieces[ui][PieceType::Pawn.index()].any() {
        return true;
    }
    let occ = pos.occupied();
    let prey = pos.side(!pos.stm) & !pos.pieces[ti][PieceType::King.index()];
    for kind in PIECES {
        for from in pos.pieces[ui][kind.index()] {
            if (piece_attacks(kind, from, occ) & prey).any() {
                return true;
            }
        }
    }
    false
}

/// Calls `f(successor, class)` for every legal capture and promotion (the moves that leave
/// this endgame, `MoveClass::Convert`); stops early (and returns false) when `f` returns false.
#[inline]
pub fn for_each_conversion(
    pos: &TbPosition,
    legal: &Legality,
    mut f: impl FnMut(&TbPosition, MoveClass) -> bool,
) -> bool {
    let us = pos.stm;
    let them = !us;
    let (ui, ti) = (us.index(), them.index());
    let occ = pos.occupied();
    let prey = pos.side(them) & !pos.pieces[ti][PieceType::King.index()];
    let mut emit = |succ: &mut TbPosition, class: MoveClass| -> bool {
        succ.stm = them;
        succ.ep = None;
        f(succ, class)
    };
    for kind in PIECES {
        let k = kind.index();
        for from in pos.pieces[ui][k] {
            let attacks = piece_attacks(kind, from, occ) & prey;
            let targets = if kind == PieceType::King {
                legal.king_keep(attacks)
            } else {
                legal.keep(from, attacks)
            };
            for to in targets {
                let mut s = *pos;
                s.pieces[ui][k].0 ^= (1u64 << from.0) | (1u64 << to.0);
                let c = kind_at(pos, them, to);
                s.pieces[ti][c].clear(to);
                let class = MoveClass::Convert {
                    captured: c as u8,
                    promoted: NONE,
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
        // Promoting pushes (the others are `for_each_pawn_push`'s).
        let to = from.offset(fwd);
        if promotes && !occ.contains(to) && legal.keep(from, Bitboard::from_square(to)).any() {
            let mut s = *pos;
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
        for to in legal.keep(from, pawn_attacks(us, from) & prey) {
            let c = kind_at(pos, them, to);
            let mut s = *pos;
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
        // En passant: two men leave the capturer's rank at once, so the own king is tested
        // on the position made.
        if let Some(ep) = pos.ep {
            if pawn_attacks(us, from).contains(ep) {
                let victim = ep.offset(-fwd);
                if pos.pieces[ti][p].contains(victim) {
                    let mut s = *pos;
                    s.pieces[ui][p].0 ^= (1u64 << from.0) | (1u64 << ep.0);
                    s.pieces[ti][p].clear(victim);
                    s.stm = them;
                    s.ep = None;
                    let class = MoveClass::Convert {
                        captured: p as u8,
                        promoted: NONE,
                    };
                    if !s.attacked_by(s.king(us), them) && !emit(&mut s, class) {
                        return false;
                    }
                }
            }
        }
    }
    true
}

/// The side to move's legal moves that stay in this endgame, counted without making them.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct InnerMoves {
    /// Non-capturing piece and king moves (`MoveClass::Quiet`).
    pub quiet: u32,
    /// Non-promoting pawn pushes (`MoveClass::Pawn`).
    pub pushes: u32,
}

/// Counts the quiet moves and pawn pushes of `pos` from attack sets and `legal`, instead of
/// making each move and asking whether the own king is attacked: the init pass needs only how
/// many there are.
#[inline]
pub fn count_inner_moves(pos: &TbPosition, legal: &Legality) -> InnerMoves {
    let us = pos.stm;
    let ui = us.index();
    let occ = pos.occupied();
    let mut quiet = legal.king_keep(king_attacks(legal.ksq) & !occ).count();
    for kind in [
        PieceType::Knight,
        PieceType::Bishop,
        PieceType::Rook,
        PieceType::Queen,
    ] {
        for from in pos.pieces[ui][kind.index()] {
            quiet += legal
                .keep(from, piece_attacks(kind, from, occ) & !occ)
                .count();
        }
    }
    let fwd = forward(us);
    let mut pushes = 0;
    for from in pos.pieces[ui][PieceType::Pawn.index()] {
        let r = rel_rank(from, us);
        let to = from.offset(fwd);
        if r == 6 || occ.contains(to) {
            continue;
        }
        let mut targets = Bitboard::from_square(to);
        if r == 1 && !occ.contains(to.offset(fwd)) {
            targets.set(to.offset(fwd));
        }
        pushes += legal.keep(from, targets).count();
    }
    InnerMoves { quiet, pushes }
}

/// The legal non-capturing piece and king moves of the side to move as sets:
/// `f(kind, from, tos)` for each man that has some; stops early (and returns false) when `f`
/// returns false. For callers that number successors from the squares alone.
#[inline]
pub fn for_each_quiet_set(
    pos: &TbPosition,
    legal: &Legality,
    mut f: impl FnMut(PieceType, Square, Bitboard) -> bool,
) -> bool {
    let ui = pos.stm.index();
    let occ = pos.occupied();
    for kind in [
        PieceType::Knight,
        PieceType::Bishop,
        PieceType::Rook,
        PieceType::Queen,
    ] {
        for from in pos.pieces[ui][kind.index()] {
            let tos = legal.keep(from, piece_attacks(kind, from, occ) & !occ);
            if tos.any() && !f(kind, from, tos) {
                return false;
            }
        }
    }
    let tos = legal.king_keep(king_attacks(legal.ksq) & !occ);
    !tos.any() || f(PieceType::King, legal.ksq, tos)
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

/// Calls `f(predecessor, kind of the man that moved)` for every position from which the side
/// that just moved (the side not to move in `pos`) reached `pos` by a move that stays in this
/// endgame: no un-captures, no un-promotions. With `pawn_moves` false, pawn moves are left out
/// (for DTZ, where they are zeroing moves whose value does not come from `pos`). Predecessors
/// in which the side to move could have captured en passant are emitted too: they are distinct
/// entries of the index.
#[inline]
pub fn for_each_unmove(
    pos: &TbPosition,
    pawn_moves: bool,
    mut f: impl FnMut(&TbPosition, PieceType),
) {
    let s = pos.stm; // the side to move now
    let m = !s; // the side that just moved
    let (mi, si) = (m.index(), s.index());
    let p = PieceType::Pawn.index();
    // Emit a predecessor (m to move), plus its variants where s had just double-stepped next
    // to a pawn of m.
    let mut emit = |pred: &mut TbPosition, kind: PieceType| {
        pred.stm = m;
        pred.ep = None;
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
        let fwd = forward(m);
        let (dest, origin) = (ep.offset(fwd), ep.offset(-fwd));
        if pawn_moves
            && pos.pieces[mi][p].contains(dest)
            && !pos.occupied().contains(ep)
            && !pos.occupied().contains(origin)
            && unmove_froms(pos, PieceType::Pawn, dest, Bitboard::from_square(origin)).any()
        {
            let mut q = *pos;
            q.pieces[mi][p].0 ^= (1u64 << dest.0) | (1u64 << origin.0);
            emit(&mut q, PieceType::Pawn);
        }
        return;
    }
    for_each_unmove_set(pos, pawn_moves, |kind, to, froms| {
        let k = kind.index();
        for from in froms {
            let mut q = *pos;
            q.pieces[mi][k].0 ^= (1u64 << from.0) | (1u64 << to.0);
            emit(&mut q, kind);
        }
    });
}

/// The un-moves of `pos` (which must carry no e.p. square) as sets: `f(kind, to, froms)` for
/// each man of the side that just moved, with the squares it can legally have come from by a
/// move that stays in this endgame (pawns only with `pawn_moves`). The predecessors are the
/// positions `for_each_unmove` gives before its e.p. variants; a caller that can number them
/// from the squares alone needs no positions.
#[inline]
pub fn for_each_unmove_set(
    pos: &TbPosition,
    pawn_moves: bool,
    mut f: impl FnMut(PieceType, Square, Bitboard),
) {
    let m = !pos.stm;
    let mi = m.index();
    let occ = pos.occupied();
    for kind in PIECES {
        for to in pos.pieces[mi][kind.index()] {
            let froms = match kind {
                PieceType::Knight => knight_attacks(to),
                PieceType::King => king_attacks(to),
                _ => piece_attacks(kind, to, occ),
            } & !occ;
            if froms.any() {
                let froms = unmove_froms(pos, kind, to, froms);
                if froms.any() {
                    f(kind, to, froms);
                }
            }
        }
    }
    if !pawn_moves {
        return;
    }
    let p = PieceType::Pawn.index();
    let fwd = forward(m);
    for to in pos.pieces[mi][p] {
        let r = rel_rank(to, m);
        if r < 2 {
            continue; // on its home rank: it has not moved
        }
        let from = to.offset(-fwd);
        if occ.contains(from) {
            continue;
        }
        let mut froms = Bitboard::from_square(from);
        if r == 3 {
            let origin = from.offset(-fwd);
            // After a double step next to a pawn of s, `pos` would carry an e.p. square.
            let capturers = pawn_attacks(m, from) & pos.pieces[(!m).index()][p];
            if !occ.contains(origin) && capturers.is_empty() {
                froms.set(origin);
            }
        }
        let froms = unmove_froms(pos, PieceType::Pawn, to, froms);
        if froms.any() {
            f(PieceType::Pawn, to, froms);
        }
    }
}

/// Which man a frame's move or un-move moves (`for_each_frame_move`, `for_each_frame_unmove`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FrameMover {
    King,
    /// Another man of the frame, of this type.
    Man(PieceType),
    /// The lone man, from (or back to) this square of his.
    Lone(Square),
}

impl FrameMover {
    fn of(kind: PieceType) -> FrameMover {
        if kind == PieceType::King {
            FrameMover::King
        } else {
            FrameMover::Man(kind)
        }
    }

    /// The lone man's square, where he is the mover.
    pub fn lone_square(self) -> Option<Square> {
        match self {
            FrameMover::Lone(at) => Some(at),
            _ => None,
        }
    }
}

/// The un-moves of a frame's entries at once (pawnless): `frame` holds every man but a lone
/// one of colour and type `lone` (no pawn), which stands on each square of `on` in turn, and
/// the side that just moved is the one not to move in `frame`. For each un-move of another
/// man, `f(pred, mover, mask)` once: `pred` the predecessor without the lone man, `mask` the
/// squares of `on` on which he lets that un-move be made legally (it crosses or ends on none of
/// them, and leaves the side then not to move out of check). For each un-move of the lone man
/// himself (when he is the mover's), `f(pred, FrameMover::Lone(at), froms)` once a square `at`
/// of `on`. Each bit is one predecessor: together they are those `for_each_unmove_set` gives
/// entry by entry, as many times.
pub fn for_each_frame_unmove(
    frame: &TbPosition,
    lone: (Color, PieceType),
    on: u64,
    f: impl FnMut(&TbPosition, FrameMover, u64),
) {
    // Without pawns an un-move is a move of the side that just moved, which is then to move.
    frame_steps(frame, lone, on, !frame.stm, !frame.stm, f);
}

/// The quiet moves of a frame's entries at once (pawnless), `for_each_frame_unmove` forwards:
/// for each move of another man of the side to move, `f(succ, mover, mask)` once, `mask` the
/// squares of `on` on which the lone man lets it be made legally; for each move of the lone
/// man himself (when he is the mover's), `f(succ, FrameMover::Lone(at), tos)` once a square
/// `at` of `on`. `succ` is the successor without the lone man.
pub fn for_each_frame_move(
    frame: &TbPosition,
    lone: (Color, PieceType),
    on: u64,
    f: impl FnMut(&TbPosition, FrameMover, u64),
) {
    frame_steps(frame, lone, on, frame.stm, !frame.stm, f);
}

/// The quiet steps of the side `mover` from a frame (`for_each_frame_move`,
/// `for_each_frame_unmove`), the side `to_move` to move after each.
#[inline(always)]
fn frame_steps(
    frame: &TbPosition,
    lone: (Color, PieceType),
    on: u64,
    mover: Color,
    to_move: Color,
    mut f: impl FnMut(&TbPosition, FrameMover, u64),
) {
    let mi = mover.index();
    let occ = frame.occupied();
    for kind in PIECES {
        for from in frame.pieces[mi][kind.index()] {
            for to in piece_attacks(kind, from, occ) & !occ {
                let mut next = *frame;
                next.stm = to_move;
                next.pieces[mi][kind.index()].0 ^= (1u64 << from.0) | (1u64 << to.0);
                // The lone man must not stand on the way nor where the man goes.
                let mask = on & lone_squares(&next, lone) & !(between(from, to).0 | 1 << to.0);
                if mask != 0 {
                    f(&next, FrameMover::of(kind), mask);
                }
            }
        }
    }
    let (lc, lk) = lone;
    if lc == mover {
        let mut next = *frame;
        next.stm = to_move;
        let legal = lone_squares(&next, lone);
        for at in Bitboard(on) {
            let tos = piece_attacks(lk, at, occ).0 & !occ.0 & legal;
            if tos != 0 {
                f(&next, FrameMover::Lone(at), tos);
            }
        }
    }
}

/// The captures of a frame's entries at once (pawnless), as `for_each_frame_move` gives their
/// quiet moves: `f(mask)` for each capture, each bit of `mask` a square of `on` on which the
/// lone man lets it be made, is taken by it, or makes it himself.
pub fn for_each_frame_capture(
    frame: &TbPosition,
    lone: (Color, PieceType),
    on: u64,
    mut f: impl FnMut(u64),
) {
    let u = frame.stm;
    let (ui, ti) = (u.index(), (!u).index());
    let occ = frame.occupied();
    let prey = frame.side(!u) & !frame.pieces[ti][PieceType::King.index()];
    let (lc, lk) = lone;
    for kind in PIECES {
        for from in frame.pieces[ui][kind.index()] {
            let attacks = piece_attacks(kind, from, occ);
            for to in attacks & prey {
                let mut succ = *frame;
                succ.stm = !u;
                succ.pieces[ui][kind.index()].0 ^= (1u64 << from.0) | (1u64 << to.0);
                succ.pieces[ti][kind_at(frame, !u, to)].clear(to);
                let mask = on & lone_squares(&succ, lone) & !between(from, to).0;
                if mask != 0 {
                    f(mask);
                }
            }
            if lc != u {
                // The lone man taken where he stands.
                for at in attacks & Bitboard(on) {
                    let mut succ = *frame;
                    succ.stm = !u;
                    succ.pieces[ui][kind.index()].0 ^= (1u64 << from.0) | (1u64 << at.0);
                    if !succ.attacked_by(succ.king(u), !u) {
                        f(1 << at.0);
                    }
                }
            }
        }
    }
    if lc == u {
        // The lone man takes: from every square of `on` that attacks the man taken.
        for to in prey {
            let mut succ = *frame;
            succ.stm = !u;
            succ.pieces[ti][kind_at(frame, !u, to)].clear(to);
            if lone_squares(&succ, lone) >> to.0 & 1 != 0 {
                let froms = piece_attacks(lk, to, occ).0 & on;
                if froms != 0 {
                    f(froms);
                }
            }
        }
    }
}

/// The squares on which a lone man of colour and type `lone` (no pawn), added to `pos` (which
/// lacks him), leaves the side not to move out of check: empty squares, on the line of the one
/// slider that checks without him, and, for a man of the side to move, not checking himself.
#[inline(always)]
pub fn lone_squares(pos: &TbPosition, (lc, lk): (Color, PieceType)) -> u64 {
    let s = !pos.stm;
    let mine = &pos.pieces[pos.stm.index()];
    let sk = pos.king(s);
    let occ = pos.occupied();
    let leapers = (knight_attacks(sk) & mine[PieceType::Knight.index()])
        | (pawn_attacks(s, sk) & mine[PieceType::Pawn.index()])
        | (king_attacks(sk) & mine[PieceType::King.index()]);
    if leapers.any() {
        return 0;
    }
    let diagonal = mine[PieceType::Bishop.index()] | mine[PieceType::Queen.index()];
    let straight = mine[PieceType::Rook.index()] | mine[PieceType::Queen.index()];
    let sliders = (bishop_attacks(sk, occ) & diagonal) | (rook_attacks(sk, occ) & straight);
    let mut squares = !occ.0;
    if sliders.more_than_one() {
        return 0;
    } else if sliders.any() {
        squares &= between(sk, sliders.lsb()).0;
    }
    if lc == pos.stm {
        squares &= !piece_attacks(lk, sk, occ).0;
    }
    squares
}

/// Calls `f(predecessor)` for every legal position, the side not to move in `pos` (m) to
/// move, from which m reached `pos` by a piece or king capture of a man of kind `captured`:
/// the man that moved stood on an empty square it attacks from where it stands, the captured
/// man where it stands now. Pawnless endgames only (no pawn captures, no promotions). The
/// un-captures lead from a sub-endgame's positions back into this endgame's.
/// Where `but` names a type, the un-captures by a man of it are left out (`bitmaps` makes
/// them a run at a time: `for_each_capturer_frame_uncapture`).
#[inline]
pub fn for_each_uncapture(
    pos: &TbPosition,
    captured: PieceType,
    but: Option<PieceType>,
    mut f: impl FnMut(&TbPosition),
) {
    let s = pos.stm;
    let (mi, si) = ((!s).index(), s.index());
    let occ = pos.occupied();
    for kind in PIECES.into_iter().filter(|&k| Some(k) != but) {
        for to in pos.pieces[mi][kind.index()] {
            let froms = match kind {
                PieceType::Knight => knight_attacks(to),
                PieceType::King => king_attacks(to),
                _ => piece_attacks(kind, to, occ),
            } & !occ;
            for from in froms {
                let mut pred = *pos;
                pred.pieces[mi][kind.index()].0 ^= (1u64 << from.0) | (1u64 << to.0);
                pred.pieces[si][captured.index()].set(to);
                pred.stm = !s;
                // The side not to move in the predecessor must not be in check.
                if !pred.attacked_by(pred.king(s), !s) {
                    f(&pred);
                }
            }
        }
    }
}

/// The un-captures of a frame's entries at once (pawnless), as `for_each_uncapture` gives them
/// entry by entry: `frame` holds every man but a lone one of colour and type `lone` (no pawn,
/// not the man the un-capture puts back), who stands on each square of `on` in turn, and a man
/// of type `captured` of the side to move was just taken. `f(pred, mask)` once a predecessor
/// without the lone man, `mask` the squares of `on` on which he lets it be: he stands neither on
/// the capturer's way nor where it came from, and leaves the side then not to move out of
/// check. Where he made the capture himself, from each square `at` of `on`, `pred` has the
/// taken man on `at` and `mask` holds the squares he came from. Each bit is one predecessor.
pub fn for_each_frame_uncapture(
    frame: &TbPosition,
    lone: (Color, PieceType),
    on: u64,
    captured: PieceType,
    mut f: impl FnMut(&TbPosition, u64),
) {
    let s = frame.stm;
    let (mi, si) = ((!s).index(), s.index());
    let occ = frame.occupied();
    for kind in PIECES {
        for to in frame.pieces[mi][kind.index()] {
            for from in piece_attacks(kind, to, occ) & !occ {
                let mut pred = *frame;
                pred.pieces[mi][kind.index()].0 ^= (1u64 << from.0) | (1u64 << to.0);
                pred.pieces[si][captured.index()].set(to);
                pred.stm = !s;
                let mask = on & lone_squares(&pred, lone) & !between(from, to).0;
                if mask != 0 {
                    f(&pred, mask);
                }
            }
        }
    }
    let (lc, lk) = lone;
    if lc == !s {
        for at in Bitboard(on) {
            let mut pred = *frame;
            pred.pieces[si][captured.index()].set(at);
            pred.stm = !s;
            let froms = piece_attacks(lk, at, occ).0 & !occ.0 & lone_squares(&pred, lone);
            if froms != 0 {
                f(&pred, froms);
            }
        }
    }
}

/// The un-captures by one man of positions that differ in his square alone (pawnless), the man
/// taken being a lone one of colour and type `lone` (no pawn): `frame` holds every man but the
/// capturer, a man of type `kind` (not a king) of the side that just moved, who stands on each
/// square of `on` in turn, and the side to move in `frame` just lost the lone man there. For
/// each square the capturer can have come from, `f(pred, mask)` once: `pred` the predecessor
/// without the lone man, the capturer on that square, and `mask` the squares of `on` the lone
/// man stood on (the capturer went from there to each through empty squares, and the side then
/// not to move is out of check). Each bit is one predecessor: those `for_each_uncapture` gives
/// of the capturer's entries, by him.
pub fn for_each_capturer_frame_uncapture(
    frame: &TbPosition,
    kind: PieceType,
    on: u64,
    lone: (Color, PieceType),
    mut f: impl FnMut(&TbPosition, u64),
) {
    debug_assert_ne!(kind, PieceType::King, "the kings stay in the frame");
    let mover = !frame.stm;
    let occ = frame.occupied();
    let froms = Bitboard(on).fold(0, |b, to| b | piece_attacks(kind, to, occ).0) & !occ.0;
    for from in Bitboard(froms) {
        let mut pred = *frame;
        pred.pieces[mover.index()][kind.index()].set(from);
        pred.stm = mover;
        let mask = piece_attacks(kind, from, occ).0 & on & lone_squares(&pred, lone);
        if mask != 0 {
            f(&pred, mask);
        }
    }
}

/// The ones of `froms` (empty squares) from which the man of type `kind` on `to`, of the side
/// that just moved (m), can have come: those whose predecessor leaves the side then not to
/// move (s) out of check. Un-moving the man empties `to` and fills one square `from`; the
/// other men of m then check s's king with `to` empty, which a man on `from` can only block
/// (one slider) or not (anything else), and the man itself must not check from `from`.
#[inline(always)]
fn unmove_froms(pos: &TbPosition, kind: PieceType, to: Square, froms: Bitboard) -> Bitboard {
    let s = pos.stm;
    let mine = &pos.pieces[(!s).index()];
    let sk = pos.king(s);
    let occ = Bitboard(pos.occupied().0 & !(1u64 << to.0));
    let diagonal = mine[PieceType::Bishop.index()] | mine[PieceType::Queen.index()];
    let straight = mine[PieceType::Rook.index()] | mine[PieceType::Queen.index()];
    let checkers = ((knight_attacks(sk) & mine[PieceType::Knight.index()])
        | (pawn_attacks(s, sk) & mine[PieceType::Pawn.index()])
        | (king_attacks(sk) & mine[PieceType::King.index()])
        | (bishop_attacks(sk, occ) & diagonal)
        | (rook_attacks(sk, occ) & straight))
        & !Bitboard::from_square(to);
    let others_allow = if checkers.is_empty() {
        froms
    } else if checkers.more_than_one() {
        Bitboard::EMPTY
    } else {
        froms & between(sk, checkers.lsb())
    };
    let checks_from = match kind {
        PieceType::Pawn => pawn_attacks(s, sk),
        _ => piece_attacks(kind, sk, occ),
    };
    others_allow & !checks_from
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egtb::generate::layout::Layout;
    use crate::egtb::index::{EndgameIndex, Half};
    use crate::egtb::Material;

    /// The counted quiet moves and pushes are exactly those that making each move and asking
    /// whether the own king is attacked finds, on every entry (checks, pins, double checks,
    /// e.p. entries included); 5-man endgames on every 97th entry.
    #[test]
    fn counted_inner_moves_equal_made_moves() {
        for (name, step) in [
            ("KQKR", 1),
            ("KRKP", 1),
            ("KPKP", 1),
            ("KBBK", 1),
            ("KQKQ", 1),
            ("KRBKR", 97),
            ("KBPKP", 97),
            ("KQNKB", 97),
        ] {
            let m = Material::parse(name).unwrap();
            let index = EndgameIndex::new(&m);
            let layout = Layout::new(&index);
            let mut checked = 0u64;
            for h in Half::BOTH {
                for idx in (0..layout.size(h)).step_by(step) {
                    let Some(pos) = layout.decode(h, idx) else {
                        continue;
                    };
                    let mut made = InnerMoves {
                        quiet: 0,
                        pushes: 0,
                    };
                    for_each_quiet(&pos, |_, _| {
                        made.quiet += 1;
                        true
                    });
                    for_each_pawn_push(&pos, |_| {
                        made.pushes += 1;
                        true
                    });
                    assert_eq!(
                        count_inner_moves(&pos, &Legality::of(&pos)),
                        made,
                        "{name} {h:?} {idx}"
                    );
                    checked += 1;
                }
            }
            assert!(checked > 500_000, "{name}: {checked}");
        }
    }

    /// Every un-move gives a legal predecessor (the side not to move in it is not in check),
    /// and un-moves meet the moves that stay in the endgame exactly: as many predecessors over
    /// all entries as in-table moves (in endgames with pawns, where no position is its own
    /// mirror image and each move has one un-move).
    #[test]
    fn uncaptures_are_exactly_the_captures_reversed() {
        // Every capture of every KRBKN position (every 41st entry), un-captured from the
        // position it reaches, gives back that position; and every un-capture is legal and
        // has that capture.
        let m = Material::parse("KRBKN").unwrap();
        let index = EndgameIndex::new(&m);
        let layout = Layout::new(&index);
        let (mut captures, mut found) = (0u64, 0u64);
        for h in Half::BOTH {
            for idx in (0..layout.size(h)).step_by(41) {
                let Some(pos) = layout.decode(h, idx) else {
                    continue;
                };
                for_each_conversion(&pos, &Legality::of(&pos), |succ, class| {
                    let MoveClass::Convert { captured, .. } = class else {
                        unreachable!()
                    };
                    captures += 1;
                    let kind = PieceType::from_index(captured as usize);
                    for_each_uncapture(succ, kind, None, |pred| {
                        assert!(!pred.attacked_by(pred.king(!pred.stm), pred.stm));
                        let mut back = false;
                        for_each_conversion(pred, &Legality::of(pred), |s, _| {
                            back |= s == succ;
                            true
                        });
                        assert!(back, "{pred:?} does not capture into {succ:?}");
                        found += (*pred == pos) as u64;
                    });
                    true
                });
            }
        }
        assert!(captures > 30_000, "{captures}");
        assert_eq!(found, captures);
    }

    /// A frame's un-captures found at once are those found entry by entry, as many times, each
    /// numbered in the larger endgame's layout as `bitmaps`'s seeds number them (the lone man's
    /// squares by the symmetry of the predecessor's frame), on words of sub-endgame halves
    /// where the lone man makes the capture himself or stands by while another man makes it
    /// (blocking and checking).
    #[test]
    fn uncaptures_by_frame_equal_those_by_entry() {
        let mut compared = 0u64;
        for (big, sub, h, captured, step) in [
            ("KQRKBN", "KQRKN", Half::Btm, PieceType::Bishop, 997),
            ("KQRKN", "KRKN", Half::Wtm, PieceType::Queen, 7),
            ("KQRKN", "KQKN", Half::Wtm, PieceType::Rook, 7),
        ] {
            let big_index = EndgameIndex::new(&Material::parse(big).unwrap());
            let layout = Layout::new(&big_index);
            let sub_index = EndgameIndex::new(&Material::parse(sub).unwrap());
            let sub_layout = Layout::new(&sub_index);
            let lone = layout.lone_last_man().unwrap();
            assert_eq!(lone, (Color::Black, PieceType::Knight), "{big}");
            assert_eq!(sub_layout.lone_last_man(), Some(lone), "{sub}");
            for w in (0..sub_layout.size(h) / 64).step_by(step) {
                let on = (0..64)
                    .filter(|&s| sub_layout.decode(h, w * 64 + s).is_some())
                    .fold(0u64, |b, s| b | 1 << s);
                if on == 0 {
                    continue;
                }
                let mut by_frame = Vec::new();
                let frame = sub_layout.frame(h, w);
                for_each_frame_uncapture(&frame, lone, on, captured, |pred, mask| {
                    let fw = layout.frame_word(pred);
                    for (sym, part) in fw.parts(mask) {
                        for s in sym.bitboard(Bitboard(part)) {
                            by_frame.push((Half::of(pred.stm) as u8, fw.word * 64 + s.0 as u64));
                        }
                    }
                });
                let mut by_entry = Vec::new();
                for s in Bitboard(on) {
                    let pos = sub_layout.decode_valid(h, w * 64 + s.0 as u64);
                    for_each_uncapture(&pos, captured, None, |pred| {
                        let (ph, pi) = layout.encode(pred).unwrap();
                        by_entry.push((ph as u8, pi));
                    });
                }
                by_frame.sort_unstable();
                by_entry.sort_unstable();
                assert_eq!(by_frame, by_entry, "{sub} {h:?} word {w}");
                compared += by_entry.len() as u64;
            }
        }
        assert!(compared > 1_000_000, "{compared}");
    }

    /// Where the lone man is the one taken, the un-captures by one capturer of positions that
    /// differ in his square alone, found at once (`for_each_capturer_frame_uncapture`), with
    /// those of the other men entry by entry (`for_each_uncapture` with `but`), are those
    /// found entry by entry, as many times: KQRK's positions with Black to move (the queen,
    /// then the rook, made fastest by `EndgameIndex::each_with_man_fastest`, as `bitmaps`'s
    /// seeds are), each numbered in KQRKN's layout.
    #[test]
    fn uncaptures_of_the_lone_man_by_frame_equal_those_by_entry() {
        let layout_index = EndgameIndex::new(&Material::parse("KQRKN").unwrap());
        let layout = Layout::new(&layout_index);
        let lone = layout.lone_last_man().unwrap();
        assert_eq!(lone, (Color::Black, PieceType::Knight));
        let sub = EndgameIndex::new(&Material::parse("KQRK").unwrap());
        let h = Half::Btm;
        let number = |pred: &TbPosition| {
            let (ph, pi) = layout.encode(pred).unwrap();
            (ph as u8, pi)
        };
        for kind in [PieceType::Queen, PieceType::Rook] {
            let capturer = (Color::White, kind);
            let (mut by_frame, mut by_entry) = (Vec::new(), Vec::new());
            let mut group: Option<(TbPosition, u64)> = None;
            let flush = |group: Option<(TbPosition, u64)>, out: &mut Vec<(u8, u64)>| {
                let Some((frame, on)) = group else { return };
                for_each_capturer_frame_uncapture(&frame, kind, on, lone, |pred, mask| {
                    let fw = layout.frame_word(pred);
                    for (sym, part) in fw.parts(mask) {
                        for s in sym.bitboard(Bitboard(part)) {
                            out.push((Half::of(pred.stm) as u8, fw.word * 64 + s.0 as u64));
                        }
                    }
                });
            };
            let (mut runs, mut positions) = (0u64, 0u64);
            sub.each_with_man_fastest(h, 0..sub.zones(h).0 / 3, capturer, |idx| {
                let Some(pos) = sub.decode(h, idx) else {
                    return;
                };
                positions += 1;
                for_each_uncapture(&pos, PieceType::Knight, None, |pred| {
                    by_entry.push(number(pred))
                });
                for_each_uncapture(&pos, PieceType::Knight, Some(kind), |pred| {
                    by_frame.push(number(pred))
                });
                let mut frame = pos;
                let at = std::mem::take(&mut frame.pieces[0][kind.index()]).0;
                match &mut group {
                    Some((f, on)) if *f == frame => *on |= at,
                    _ => {
                        runs += 1;
                        flush(group.replace((frame, at)), &mut by_frame);
                    }
                }
            });
            flush(group, &mut by_frame);
            by_frame.sort_unstable();
            by_entry.sort_unstable();
            assert_eq!(by_frame.len(), by_entry.len(), "{kind:?}");
            assert!(by_frame == by_entry, "{kind:?}");
            // Runs of many positions: the frames were made at once.
            assert!(
                positions > 100_000 && runs * 10 < positions,
                "{kind:?}: {runs} {positions}"
            );
        }
    }

    #[test]
    fn unmoves_are_legal_and_meet_every_move() {
        for (name, step) in [
            ("KQKR", 1),
            ("KBBK", 1),
            ("KRKP", 1),
            ("KPKP", 1),
            ("KPPK", 1),
            ("KBPKP", 97),
            ("KRPKR", 97),
        ] {
            let m = Material::parse(name).unwrap();
            let index = EndgameIndex::new(&m);
            let layout = Layout::new(&index);
            let (mut moves, mut unmoves) = (0u64, 0u64);
            for h in Half::BOTH {
                for idx in (0..layout.size(h)).step_by(step) {
                    let Some(pos) = layout.decode(h, idx) else {
                        continue;
                    };
                    let n = count_inner_moves(&pos, &Legality::of(&pos));
                    moves += (n.quiet + n.pushes) as u64;
                    for_each_unmove(&pos, true, |pred, _| {
                        assert!(
                            !pred.attacked_by(pred.king(!pred.stm), pred.stm),
                            "{name} {h:?} {idx}: illegal predecessor"
                        );
                        unmoves += 1;
                    });
                }
            }
            assert!(moves > 100_000, "{name}");
            if m.has_pawns() && step == 1 {
                assert_eq!(moves, unmoves, "{name}");
            }
        }
    }

    /// The captures and promotions (e.p. included) are exactly the chess core's legal ones, on
    /// every entry of endgames with checks, pins, promotions and e.p. (5-man endgames on every
    /// 389th entry); `may_convert` is false only where there is none.
    #[test]
    fn conversions_equal_the_chess_core_captures_and_promotions() {
        use crate::chess::{legal_moves, Position};
        use crate::egtb::play::tables::one_ply::{set_position, successor, Effect};
        let mut board = Position::startpos();
        for (name, step) in [
            ("KQKR", 1),
            ("KRKP", 1),
            ("KPKP", 1),
            ("KBPKP", 389),
            ("KRPKR", 389),
            ("KQNKB", 389),
        ] {
            let m = Material::parse(name).unwrap();
            let index = EndgameIndex::new(&m);
            let layout = Layout::new(&index);
            let (mut conversions, mut without) = (0u64, 0u64);
            for h in Half::BOTH {
                for idx in (0..layout.size(h)).step_by(step) {
                    let Some(pos) = layout.decode(h, idx) else {
                        continue;
                    };
                    let mut ours = Vec::new();
                    for_each_conversion(&pos, &Legality::of(&pos), |succ, _| {
                        ours.push(*succ);
                        true
                    });
                    set_position(&mut board, &pos);
                    let mut core = Vec::new();
                    for mv in legal_moves(&board).iter() {
                        let (mut succ, effect) = successor(&board, &pos, mv);
                        if effect == Effect::Converts {
                            succ.ep = None;
                            core.push(succ);
                        }
                    }
                    // Each successor appears once on either side (promotions differ in kind).
                    assert!(
                        ours.len() == core.len() && ours.iter().all(|s| core.contains(s)),
                        "{name} {h:?} {idx}: {ours:?} against {core:?}"
                    );
                    conversions += ours.len() as u64;
                    // Where the quick test says none can be, there is none.
                    if !may_convert(&pos) {
                        assert!(ours.is_empty(), "{name} {h:?} {idx}: {ours:?}");
                        without += 1;
                    }
                }
            }
            assert!(conversions > 10_000, "{name}: {conversions}");
            assert!(without > 1_000 || m.has_pawns(), "{name}: {without}");
        }
    }
}
