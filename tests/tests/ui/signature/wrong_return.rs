use dbbench_core::{db_bench, Result, Session};

// The body returns `dbbench_core::Result<()>`.
#[db_bench]
async fn no_return(db: &mut Session) {
    db.lap("start");
}

#[db_bench]
async fn returns_a_number(db: &mut Session) -> u64 {
    db.lap("start");
    1
}

fn main() {
    let _: Option<Result<()>> = None;
}
