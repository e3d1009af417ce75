use dbbench_core::{db_bench, Result, Session};

struct Suite;

// A benchmark is a free function, not a method.
impl Suite {
    #[db_bench]
    async fn double_charges(&mut self, db: &mut Session) -> Result<()> {
        db.lap("start");
        Ok(())
    }
}

fn main() {
    let _ = Suite;
}
