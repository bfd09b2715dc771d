//! `engine train`: the network depends on the seed, the loss falls, and the integer network
//! written evaluates as the float one it was rounded from.

use fortress::eval::network::Network;
use fortress::tune::datagen::{run as datagen, DatagenArgs};
use fortress::tune::train::{run, TrainArgs};

#[test]
fn training_is_deterministic_and_learns() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("games.bin");
    datagen(
        &[],
        None,
        &DatagenArgs {
            out: data.clone(),
            games: 12,
            nodes: 300,
            random_plies: 6,
            seed: 11,
            threads: 2,
            network: Network::built_in(),
        },
        &mut |_| {},
    )
    .unwrap();
    let train = |out: &str, threads: usize| {
        let args = TrainArgs {
            data: vec![data.clone()],
            out: dir.path().join(out),
            hidden: 16,
            buckets: 4,
            epochs: 8,
            batch: 64,
            rate: 0.01,
            wdl: 0.5,
            validation: 0.1,
            seed: 3,
            mirror: true,
        };
        let mut reports = Vec::new();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let net = pool
            .install(|| {
                run(&args, &mut |r| {
                    reports.push((r.train_loss, r.validation_loss, r.quantised_loss))
                })
            })
            .unwrap();
        (net, reports, std::fs::read(&args.out).unwrap())
    };
    let (net, reports, bytes) = train("a.nnue", 1);
    let (_, again, bytes2) = train("b.nnue", 2);
    assert_eq!(
        bytes, bytes2,
        "the same seed gives the same network, whatever the threads"
    );
    assert_eq!(reports, again);
    assert_eq!(Network::from_bytes(&bytes).unwrap(), net);
    assert_eq!(net.buckets(), 4);
    let (first, last) = (reports[0], reports[reports.len() - 1]);
    assert!(
        last.0 < 0.9 * first.0,
        "training loss {} then {}",
        first.0,
        last.0
    );
    for (_, float, integer) in &reports {
        assert!(
            (float - integer).abs() < 0.002,
            "float {float}, integer {integer}"
        );
    }
}
