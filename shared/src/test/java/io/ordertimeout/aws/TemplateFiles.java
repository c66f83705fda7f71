package io.ordertimeout.aws;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * template.yaml and the templates of its nested applications (an AWS::Serverless::Application's
 * local {@code Location}, such as infra/monitoring/template.yaml), for this module's tests that
 * read the templates as text. (infra/local's SamTemplate reads them as YAML; this module cannot
 * depend on it.)
 */
public final class TemplateFiles {
  private static final Pattern LOCATION = Pattern.compile("(?m)^      Location: (\\S+)$");

  private TemplateFiles() {}

  /** The repository root: the first directory up from here with template.yaml and mvnw. */
  public static Path root() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.exists(dir.resolve("template.yaml")) && Files.exists(dir.resolve("mvnw"))) {
        return dir;
      }
    }
    throw new IllegalStateException("no template.yaml above " + Path.of("").toAbsolutePath());
  }

  /** template.yaml first, then each nested application's template, in template order. */
  public static List<Path> all(Path root) {
    Path parent = root.resolve("template.yaml");
    List<Path> out = new ArrayList<>(List.of(parent));
    Matcher m = LOCATION.matcher(read(parent));
    while (m.find()) {
      Path nested = root.resolve(m.group(1)).normalize();
      if (!Files.isRegularFile(nested)) {
        throw new IllegalStateException("template.yaml's Location " + m.group(1) + " is no file");
      }
      out.add(nested);
    }
    return out;
  }

  /**
   * The text of every template, template.yaml first: a parameter's Default is found in
   * template.yaml, where a deployer sets it, before the nested template that receives it.
   */
  public static String text(Path root) {
    StringBuilder all = new StringBuilder();
    for (Path f : all(root)) {
      all.append(read(f)).append("\n\n");
    }
    return all.toString();
  }

  private static String read(Path f) {
    try {
      return Files.readString(f);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + f, e);
    }
  }
}
