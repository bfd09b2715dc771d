//! `engine train`: its arguments and report.

use crate::tune::train::{EpochReport, TrainArgs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct TrainCli {
    /// Record files written by datagen.
    #[arg(required = true)]
    data: Vec<PathBuf>,
    /// The network file written (after every epoch).
    #[arg(long)]
    out: PathBuf,
    /// Neurons of the hidden layer (per side).
    #[arg(long, default_value_t = 256)]
    hidden: usize,
    /// Output buckets, chosen by the number of men on the board (1 to 31).
    #[arg(long, default_value_t = 1)]
    buckets: usize,
    #[arg(long, default_value_t = 10)]
    epochs: usize,
    /// Positions a step.
    #[arg(long, default_value_t = 16_384)]
    batch: usize,
    /// Adam's first learning rate (falling linearly to a tenth of it).
    #[arg(long, default_value_t = 0.001)]
    rate: f32,
    /// The game result's share of the target (the rest is the search's score).
    #[arg(long, default_value_t = 0.5)]
    wdl: f32,
    /// Share of the records, the last ones, held out to measure the loss.
    #[arg(long, default_value_t = 0.02)]
    validation: f64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also train on each position mirrored left to right (files a-h swapped): the network sees
    /// no castling rights, so a position and its mirror image are worth the same to it.
    #[arg(long)]
    mirror: bool,
}

pub fn run(cli: &TrainCli) -> ExitCode {
    let bad = |what: &str| {
        eprintln!("train: {what}");
        ExitCode::FAILURE
    };
    if !(1..=4096).contains(&cli.hidden) {
        return bad("--hidden must be 1 to 4096");
    }
    let max_buckets = crate::eval::network::MAX_BUCKETS;
    if !(1..=max_buckets).contains(&cli.buckets) {
        return bad(&format!("--buckets must be 1 to {max_buckets}"));
    }
    if cli.epochs == 0 || cli.batch == 0 {
        return bad("--epochs and --batch must be at least 1");
    }
    if !((0.0..=1.0).contains(&cli.wdl) && cli.validation > 0.0 && cli.validation < 1.0) {
        return bad("--wdl must be 0 to 1, --validation between 0 and 1");
    }
    let args = TrainArgs {
        data: cli.data.clone(),
        out: cli.out.clone(),
        hidden: cli.hidden,
        buckets: cli.buckets,
        epochs: cli.epochs,
        batch: cli.batch,
        rate: cli.rate,
        wdl: cli.wdl,
        validation: cli.validation,
        seed: cli.seed,
        mirror: cli.mirror,
    };
    let start = Instant::now();
    let result = crate::tune::train::run(&args, &mut |r: &EpochReport| {
        println!(
            "epoch {:>3}  train loss {:.6}  held-out loss {:.6} (integer network {:.6})  {:.1} s",
            r.epoch,
            r.train_loss,
            r.validation_loss,
            r.quantised_loss,
            start.elapsed().as_secs_f64()
        );
    });
    match result {
        Ok(_) => {
            println!("network written to {}", cli.out.display());
            ExitCode::SUCCESS
        }
        Err(e) => bad(&e),
    }
}
