//! Run a scenario file and print the JSON report: `cargo run --release
//! --example run -- scenarios/gbe-mtu1500-bulk.toml [seed] [pcap-dir]`.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: run SCENARIO.toml [SEED] [PCAP_DIR]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("error: {path}: {e}");
        std::process::exit(2)
    });
    let opts = nicsim_core::RunOptions {
        source: path.clone(),
        seed: args.get(2).map(|s| s.parse().expect("seed is an integer")),
        pcap_dir: args.get(3).map(Into::into),
    };
    let wall = std::time::Instant::now();
    match nicsim_core::run_toml(&text, &opts) {
        Ok(report) => {
            println!("{}", report.to_json());
            eprintln!("wall time {:.3} s", wall.elapsed().as_secs_f64());
        }
        Err(e) => {
            eprintln!("error: {path}: {e}");
            std::process::exit(1);
        }
    }
}
