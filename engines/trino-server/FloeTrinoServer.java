package floe.engines;

/**
 * Starts a Trino coordinator from a class path of jars. The Trino server tarball's entry point
 * (io.trino.server.TrinoServer, in trino-server-main) is not served by the registry this project can
 * reach, and all it does is check the Java version and call Server.start with the version string,
 * so this does the same. Configuration comes from -Dconfig=… as with Trino's own launcher.
 */
public final class FloeTrinoServer {
  private FloeTrinoServer() {}

  public static void main(String[] args) {
    if (Runtime.version().feature() < 25) {
      System.err.println("Trino needs Java 25+, found " + Runtime.version());
      System.exit(100);
    }
    new io.trino.server.Server().start(args.length > 0 ? args[0] : "unknown");
  }
}
