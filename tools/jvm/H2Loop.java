// SPDX-License-Identifier: MIT
package jitapps;

import java.nio.file.*;
import java.sql.*;
import java.util.Random;

// A JDBC loop over the H2 database (Debian's libh2-java, /usr/share/java/h2.jar), in
// memory, for the jvm-apps test and tools/bench/jvm-apps: one table with an index, then
// transactions of 20 inserts, a select by the indexed column, 10 updates by key, an
// aggregate over a key range and a range delete (the table stays near 50 000 rows), each
// committed. The random choices are seeded: `txns N` is the same work every run.
//   java -cp CLASSES:/usr/share/java/h2.jar jitapps.H2Loop seconds S|txns N [READY_DIR]
// With READY_DIR: after the loop, READY_DIR/quiet is created and the program waits
// (idle: a quiet moment for jcmd Compiler.codelist) for READY_DIR/stop, then exits.
public class H2Loop {
    public static void main(String[] a) throws Exception {
        boolean bySeconds = a[0].equals("seconds");
        long n = Long.parseLong(a[1]);
        Path ready = a.length > 2 ? Paths.get(a[2]) : null;
        long t0 = System.nanoTime(), deadline = t0 + n * 1_000_000_000L;
        long txns = 0, rows = 0, sum = 0;
        Random rnd = new Random(42);
        try (Connection c = DriverManager.getConnection("jdbc:h2:mem:loop;DB_CLOSE_DELAY=-1", "sa", "")) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE acct(id BIGINT PRIMARY KEY, owner VARCHAR(64), balance BIGINT, note VARCHAR(255))");
                s.execute("CREATE INDEX acct_owner ON acct(owner)");
            }
            c.setAutoCommit(false);
            PreparedStatement ins = c.prepareStatement("INSERT INTO acct VALUES (?, ?, ?, ?)");
            PreparedStatement sel = c.prepareStatement("SELECT id, balance, note FROM acct WHERE owner = ? ORDER BY id");
            PreparedStatement upd = c.prepareStatement("UPDATE acct SET balance = balance + ?, note = ? WHERE id = ?");
            PreparedStatement agg = c.prepareStatement("SELECT COUNT(*), SUM(balance), MAX(LENGTH(note)) FROM acct WHERE id BETWEEN ? AND ?");
            PreparedStatement del = c.prepareStatement("DELETE FROM acct WHERE id BETWEEN ? AND ?");
            long nextId = 0;
            while (bySeconds ? System.nanoTime() < deadline : txns < n) {
                for (int i = 0; i < 20; i++) {
                    ins.setLong(1, nextId);
                    ins.setString(2, "owner" + (nextId % 997));
                    ins.setLong(3, rnd.nextInt(10000));
                    ins.setString(4, "note " + nextId + " " + Long.toHexString(rnd.nextLong()));
                    ins.executeUpdate();
                    nextId++;
                }
                sel.setString(1, "owner" + rnd.nextInt(997));
                try (ResultSet r = sel.executeQuery()) { while (r.next()) { sum += r.getLong(2); rows++; } }
                for (int i = 0; i < 10; i++) {
                    upd.setLong(1, rnd.nextInt(100) - 50);
                    upd.setString(2, "updated " + txns);
                    upd.setLong(3, (long) rnd.nextInt((int) Math.min(nextId, Integer.MAX_VALUE)));
                    upd.executeUpdate();
                }
                long lo = rnd.nextInt((int) Math.min(nextId, Integer.MAX_VALUE));
                agg.setLong(1, lo); agg.setLong(2, lo + 500);
                try (ResultSet r = agg.executeQuery()) { r.next(); sum += r.getLong(2); }
                if (nextId > 50000) { del.setLong(1, nextId - 50020); del.setLong(2, nextId - 50001); del.executeUpdate(); }
                c.commit();
                txns++;
            }
            try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT COUNT(*) FROM acct")) {
                r.next();
                System.out.printf("h2loop: %d transactions, %d rows read, %d rows in the table, %.2f s, checksum %d%n",
                        txns, rows, r.getLong(1), (System.nanoTime() - t0) / 1e9, sum);
            }
        }
        if (ready != null) {
            Files.createFile(ready.resolve("quiet"));
            while (!Files.exists(ready.resolve("stop"))) Thread.sleep(50);
        }
    }
}
