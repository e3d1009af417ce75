// The expansion uses absolute paths only, so it works in a module without the prelude and
// beside items named like the ones it generates.
#![no_implicit_prelude]

mod benches {
    ::std::thread_local!(static BENCHMARK: u8 = 0);

    #[allow(dead_code)]
    fn __dbbench_body() {}

    #[allow(dead_code)]
    struct Option;

    #[allow(dead_code)]
    mod core {}

    #[allow(dead_code)]
    mod std {}

    #[allow(dead_code)]
    mod dbbench_core {}

    /// A benchmark in a hostile module.
    #[allow(non_snake_case)]
    #[::dbbench_core::db_bench(data_files = [1, 2], timeout = "30s", data_size = "1GB")]
    pub(crate) async fn DoubleCharges(
        db: &mut ::dbbench_core::Session,
    ) -> ::dbbench_core::Result<()> {
        db.lap("start");
        ::core::result::Result::Ok(())
    }
}

fn main() {
    let bench = &benches::DoubleCharges::BENCHMARK;
    ::std::assert_eq!(bench.name, "DoubleCharges");
    ::std::assert_eq!(bench.cells.len(), 2);
    ::std::assert!(bench.module_path.ends_with("::benches::DoubleCharges"));
}
