from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("deployments", "0002_agent_api_keys"),
    ]

    operations = [
        migrations.AddField(
            model_name="rollout",
            name="action",
            field=models.CharField(choices=[("deploy", "Deploy"), ("rollback", "Rollback")],
                                   default="deploy", max_length=16),
        ),
    ]
