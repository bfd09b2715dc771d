//! Static evaluation, in centipawns for the side to move: a perspective network (`network`),
//! trained on the engine's own games (`engine datagen`, `engine train`) and built into the
//! binary (`fortress.nnue`); the UCI option `EvalFile` loads another. The search keeps its
//! accumulators up to date as it makes and unmakes moves.

pub mod network;
