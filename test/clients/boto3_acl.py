"""Object Ownership, ACLs and policy status through boto3; prints one JSON object of what it saw.

Usage: python3 boto3_acl.py <endpoint> <access-key> <secret-key> <bucket>
"""
import json
import sys
import urllib.error
import urllib.request

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def refusal(call) -> list:
    try:
        call()
    except ClientError as error:
        return [error.response["Error"]["Code"], error.response["ResponseMetadata"]["HTTPStatusCode"]]
    return ["no error", 200]


def grants(acl: dict) -> list:
    return sorted(f"{grant['Grantee'].get('URI') or grant['Grantee'].get('ID')}:{grant['Permission']}" for grant in acl["Grants"])


def status(url: str) -> int:
    try:
        return urllib.request.urlopen(url).status
    except urllib.error.HTTPError as error:
        return error.code


def main() -> None:
    endpoint, access_key, secret_key, bucket = sys.argv[1:5]
    s3 = boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id=access_key, aws_secret_access_key=secret_key,
        region_name="us-east-1", config=Config(signature_version="s3v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
    )
    seen = {}
    s3.create_bucket(Bucket=bucket)
    seen["defaultOwnership"] = s3.get_bucket_ownership_controls(Bucket=bucket)["OwnershipControls"]["Rules"][0]["ObjectOwnership"]
    seen["enforcedRefusal"] = refusal(lambda: s3.put_bucket_acl(Bucket=bucket, ACL="public-read"))
    seen["createRefusal"] = refusal(lambda: s3.create_bucket(Bucket=bucket + "-public", ACL="public-read"))
    s3.put_bucket_ownership_controls(Bucket=bucket, OwnershipControls={"Rules": [{"ObjectOwnership": "ObjectWriter"}]})
    seen["ownership"] = s3.get_bucket_ownership_controls(Bucket=bucket)["OwnershipControls"]["Rules"][0]["ObjectOwnership"]
    s3.put_bucket_acl(Bucket=bucket, ACL="public-read")
    seen["bucketGrants"] = grants(s3.get_bucket_acl(Bucket=bucket))
    s3.put_object(Bucket=bucket, Key="members.txt", Body=b"members only", ACL="authenticated-read")
    seen["objectGrants"] = grants(s3.get_object_acl(Bucket=bucket, Key="members.txt"))
    seen["isPublic"] = s3.get_bucket_policy_status(Bucket=bucket)["PolicyStatus"]["IsPublic"]
    seen["anonymousList"] = status(f"{endpoint}/{bucket}?list-type=2")
    s3.put_bucket_acl(Bucket=bucket, ACL="private")
    s3.delete_bucket_ownership_controls(Bucket=bucket)
    seen["deletedControls"] = refusal(lambda: s3.get_bucket_ownership_controls(Bucket=bucket))
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
