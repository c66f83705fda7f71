package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The documentation cannot drift from itself: every relative link of README.md and docs/ names a
 * file of the repository and, with a {@code #fragment}, a heading of that file; the README stays a
 * front page (at most 200 lines); and no page names the tracker's issue numbers, which mean nothing
 * to a reader of the repository.
 */
class DocsLinksTest {
  private static final Path ROOT = Main.templatePath().toAbsolutePath().getParent();
  private static final Pattern ISSUE_NUMBER = Pattern.compile("\\bissues? \\d+\\b");

  @Test
  void everyRelativeLinkAndAnchorResolves() {
    List<String> broken = new ArrayList<>();
    int checked = 0;
    for (Path f : Docs.files(ROOT)) {
      for (Docs.Link link : Docs.links(f)) {
        String t = link.target();
        if (t.matches("^[a-z]+:.*")) {
          continue; // http(s), mailto: not this repository's
        }
        checked++;
        int hash = t.indexOf('#');
        String path = hash < 0 ? t : t.substring(0, hash);
        Path target = path.isEmpty() ? f : f.getParent().resolve(path).normalize();
        String where = ROOT.relativize(f) + ":" + link.line() + " -> " + t;
        if (!Files.exists(target)) {
          broken.add(where + " (no such file)");
        } else if (hash >= 0 && !Docs.anchors(Docs.read(target)).contains(t.substring(hash + 1))) {
          broken.add(where + " (no such heading)");
        }
      }
    }
    assertThat(checked).as("links checked").isGreaterThan(20);
    assertThat(broken).as("broken links").isEmpty();
  }

  @Test
  void theReadmeIsAFrontPageAndTheDocsNameNoIssueNumbers() {
    assertThat(Docs.read(ROOT.resolve("README.md")).lines().count()).isLessThanOrEqualTo(200);
    List<String> numbered = new ArrayList<>();
    for (Path f : Docs.files(ROOT)) {
      Docs.prose(Docs.read(f))
          .forEach(
              (line, text) -> {
                if (ISSUE_NUMBER.matcher(text).find()) {
                  numbered.add(ROOT.relativize(f) + ":" + line + ": " + text);
                }
              });
    }
    assertThat(numbered).as("issue numbers in the docs").isEmpty();
  }

  @Test
  void anchorsFollowGitHubsRuleAndCodeBlocksHaveNone() {
    assertThat(Docs.anchors("# A title\n## `POST /orders`\n```\n# not a heading\n```\n## A title"))
        .containsExactly("a-title", "post-orders", "a-title-1");
    assertThat(Docs.slug("Scale-out on the cluster, on a loaded machine"))
        .isEqualTo("scale-out-on-the-cluster-on-a-loaded-machine");
  }
}
