//! Reports on tables: `info` (`engine tbinfo`: what a file holds), `dtz_stats` (what the 50-move
//! rule does to an endgame) and `paper` (those figures beside the six-man tables of
//! Bourzutschky, Tamplin, Haworth 2005).

pub mod dtz_stats;
pub mod info;
pub mod paper;
