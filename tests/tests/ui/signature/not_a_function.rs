use dbbench_core::db_bench;

// Only functions can be benchmarks.
#[db_bench(repeat = 3)]
struct DoubleCharges;

fn main() {
    let _ = DoubleCharges;
}
