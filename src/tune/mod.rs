//! Training the evaluation: `datagen` plays the engine against itself and keeps quiet
//! positions with the search's score and the game's result, in 32-byte records (`record`);
//! `train` fits the network of `eval::network` to them.

pub mod datagen;
pub mod record;
pub mod train;
