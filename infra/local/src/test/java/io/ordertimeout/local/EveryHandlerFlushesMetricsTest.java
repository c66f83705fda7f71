package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.RequestStreamHandler;
import io.ordertimeout.aws.HttpApiHandler;
import io.ordertimeout.aws.ScheduledHandler;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every Lambda handler of the five function modules goes through {@code Invocation.run}, the one
 * place that flushes the metrics as EMF and puts the request id in the logs: it extends {@link
 * ScheduledHandler} or {@link HttpApiHandler}, whose final {@code handleRequest} does that, and has
 * no other public {@code handleRequest} Lambda could pick instead. This module depends on every
 * function module, so the scan sees all of them.
 */
class EveryHandlerFlushesMetricsTest {
  private static final String PACKAGE = "io/ordertimeout/functions/";
  private static final Set<Class<?>> FRAMES = Set.of(ScheduledHandler.class, HttpApiHandler.class);

  @Test
  void everyHandlerClassOfTheFunctionModulesRunsInsideTheFlushingFrame() throws Exception {
    List<Class<?>> handlers =
        functionClasses().stream()
            .filter(
                c ->
                    RequestHandler.class.isAssignableFrom(c)
                        || RequestStreamHandler.class.isAssignableFrom(c))
            .filter(c -> !c.isInterface() && !Modifier.isAbstract(c.getModifiers()))
            .toList();

    // The scan found every handler the template deploys, so it cannot pass by finding none.
    SamTemplate template = SamTemplate.read(Main.templatePath());
    assertThat(handlers)
        .extracting(Class::getName)
        .containsAll(
            template.functions().stream().map(SamTemplate.Function::handlerClass).toList());
    for (Class<?> handler : handlers) {
      assertThat(FRAMES.stream().anyMatch(frame -> frame.isAssignableFrom(handler)))
          .as("%s extends ScheduledHandler or HttpApiHandler", handler.getName())
          .isTrue();
      for (Method m : handleRequestMethods(handler)) {
        assertThat(m.getDeclaringClass())
            .as("%s: Lambda may call %s, which is not the flushing frame's", handler.getName(), m)
            .isIn(FRAMES);
        assertThat(Modifier.isFinal(m.getModifiers())).as("%s is final", m).isTrue();
      }
    }
  }

  /** The public handleRequest methods Lambda chooses from for {@code Handler::handleRequest}. */
  private static List<Method> handleRequestMethods(Class<?> handler) {
    return Arrays.stream(handler.getMethods())
        .filter(m -> m.getName().equals("handleRequest") && !m.isBridge())
        .toList();
  }

  /** Every class under io.ordertimeout.functions on the test classpath (directories and jars). */
  private static List<Class<?>> functionClasses() throws IOException {
    ClassLoader loader = EveryHandlerFlushesMetricsTest.class.getClassLoader();
    List<String> names = new ArrayList<>();
    for (URL root : Collections.list(loader.getResources(PACKAGE))) {
      if ("jar".equals(root.getProtocol())) {
        names.addAll(namesInJar(root));
      } else {
        names.addAll(namesInDirectory(root));
      }
    }
    List<Class<?>> classes = new ArrayList<>();
    for (String name : names) {
      try {
        // not initialised: a handler's Lambda init would read the environment
        classes.add(Class.forName(name, false, loader));
      } catch (ClassNotFoundException e) {
        throw new IllegalStateException("listed but not loadable: " + name, e);
      }
    }
    return classes;
  }

  private static List<String> namesInDirectory(URL root) throws IOException {
    Path dir;
    try {
      dir = Path.of(root.toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException("classpath entry " + root, e);
    }
    Path base = dir;
    for (int i = 0; i < PACKAGE.split("/").length; i++) {
      base = base.getParent();
    }
    Path classesRoot = base;
    try (Stream<Path> files = Files.walk(dir)) {
      return files
          .filter(p -> p.toString().endsWith(".class"))
          .map(p -> className(classesRoot.relativize(p).toString().replace('\\', '/')))
          .toList();
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }

  private static List<String> namesInJar(URL root) throws IOException {
    JarURLConnection connection = (JarURLConnection) root.openConnection();
    connection.setUseCaches(false);
    try (JarFile jar = connection.getJarFile()) {
      return jar.stream()
          .map(JarEntry::getName)
          .filter(n -> n.startsWith(PACKAGE) && n.endsWith(".class"))
          .map(EveryHandlerFlushesMetricsTest::className)
          .toList();
    }
  }

  private static String className(String path) {
    return path.substring(0, path.length() - ".class".length()).replace('/', '.');
  }
}
