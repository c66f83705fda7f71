package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** SamTemplate's nested applications: a local Location resolves beside the parent template. */
class SamTemplateTest {

  @Test
  void aNestedApplicationsTemplateIsReadFromItsLocation(@TempDir Path dir) throws Exception {
    Files.createDirectories(dir.resolve("nested"));
    Files.writeString(
        dir.resolve("nested/child.yaml"),
        """
        Parameters:
          Fn:
            Type: String
        Resources:
          Watch:
            Type: AWS::CloudWatch::Alarm
            Properties:
              Dimensions:
                - Name: FunctionName
                  Value: !Ref Fn
        """);
    Files.writeString(
        dir.resolve("parent.yaml"),
        """
        Resources:
          Fn:
            Type: AWS::Serverless::Function
            Properties:
              Handler: a.B::handleRequest
              CodeUri: functions/a
          Child:
            Type: AWS::Serverless::Application
            Properties:
              Location: nested/child.yaml
              Parameters:
                Fn: !Ref Fn
                Topic: !GetAtt Topic.Arn
          FromRepository:
            Type: AWS::Serverless::Application
            Properties:
              Location:
                ApplicationId: arn:aws:serverlessrepo:us-east-1:123456789012:applications/x
                SemanticVersion: 1.0.0
          FromS3:
            Type: AWS::Serverless::Application
            Properties:
              Location: https://bucket.s3.amazonaws.com/child.yaml
        """);

    SamTemplate template = SamTemplate.read(dir.resolve("parent.yaml"));

    assertThat(template.functions())
        .extracting(SamTemplate.Function::logicalId)
        .containsExactly("Fn");
    assertThat(template.applications()).hasSize(1);
    SamTemplate.Application child = template.application("Child").orElseThrow();
    assertThat(child.location()).isEqualTo(dir.resolve("nested/child.yaml").toAbsolutePath());
    assertThat(child.parameters())
        .containsOnly(Map.entry("Fn", "Fn"), Map.entry("Topic", "Topic.Arn"));
    assertThat(child.template().at("/Resources/Watch/Properties/Dimensions/0/Value").asText())
        .isEqualTo("Fn");
    assertThat(template.application("FromS3")).isEmpty();
  }
}
