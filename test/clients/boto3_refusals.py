"""What a refused boto3 call answered (its status and code), shared by the boto3 client scripts."""
from botocore.exceptions import ClientError


def refusal(action) -> dict:
    try:
        action()
    except ClientError as error:
        return {"status": error.response["ResponseMetadata"]["HTTPStatusCode"], "code": error.response["Error"]["Code"]}
    return {"status": 200, "code": None}
